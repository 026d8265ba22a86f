"""Layers look down only: gpusim and puzzles never import Textual; the TUI's data helpers don't either."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
import gpusim, gpusim.observe.metrics, gpusim.roofline
import puzzles.checker, puzzles.cli, puzzles.progress, puzzles.workspace
import tui.breakdown, tui.files, tui.heat, tui.launches
loaded = sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))
assert not loaded, loaded
import tui.app
assert "textual" in sys.modules
"""


def test_only_the_app_loads_textual():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
