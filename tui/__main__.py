"""``python -m tui``: start the app."""

import sys

from tui.app import run

sys.exit(run())
