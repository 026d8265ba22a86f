"""A kernel defined in code Python reads from standard input (``python - <<EOF``) has no source Python keeps, and
gpusim compiles kernels from their source: the launch is refused with a message that says so and what to do,
not "could not get source code". The same code from a file runs (the message is about stdin, not the kernel)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROGRAM = """
import numpy as np
from numba import cuda
import gpusim

@cuda.jit
def fill(out):
    i = cuda.grid(1)
    out[i] = i

out = np.zeros(4)
try:
    gpusim.launch(fill, 1, 4, (out,))
    print("ran", out.tolist())
except gpusim.KernelCompileError as e:
    print("refused:", e.message)
"""


def _python(args: list[str], stdin: str, tmp_path: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, timeout=120,
                          env=env, cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc.stdout


def test_a_kernel_read_from_stdin_is_refused_with_what_to_do(tmp_path):
    out = _python(["-"], PROGRAM, tmp_path)
    assert out.startswith("refused:"), out
    assert "standard input" in out and "Save the code in a file" in out and "'fill'" in out
    assert "could not get source code" not in out


def test_the_same_kernel_from_a_file_runs(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    assert _python([str(tmp_path / "prog.py")], "", tmp_path).strip() == "ran [0.0, 1.0, 2.0, 3.0]"
