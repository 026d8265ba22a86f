"""``python -m tui``: start the app (guarded: the terminal is restored even if the process dies)."""

import sys

from tui.app import run, run_here
from tui.guard import CHILD_FLAG

sys.exit(run_here() if CHILD_FLAG in sys.argv[1:] else run())
