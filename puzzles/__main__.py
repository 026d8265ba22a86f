"""``python -m puzzles``: the same as the ``gpu-puzzles`` command."""

import sys

from .cli import main

sys.exit(main())
