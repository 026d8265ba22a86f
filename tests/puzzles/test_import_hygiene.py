"""Layers look down: the puzzles package (CLI and checker included) never imports the TUI's Textual."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import sys
import puzzles.cli, puzzles.checker, puzzles.registry, puzzles.workspace, puzzles.progress
puzzles.cli.main(["list"])
assert "textual" not in sys.modules, sorted(m for m in sys.modules if m.startswith("textual"))
print("clean")
"""


def test_puzzles_never_import_textual(tmp_path):
    env = dict(os.environ, GPU_PUZZLES_HOME=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("clean")
