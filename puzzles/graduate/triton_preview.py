"""What the app's Triton view shows: the program a solution becomes, and graduate mode's table for it.

Both run in child processes, as the command line runs them (``gpu-puzzles triton`` and
``python3 -m puzzles.graduate``): the player's code never runs in the app, a kernel that never ends is cut
off at ``timeout``, and the app holds no translation rules. The text is exactly the editor's: it is written
to a snapshot beside the workspace file (``.triton/<name>``) and that file is what is translated and run.

``run`` uses the GPU where there is one, else Triton's interpreter (the puzzle's cases only, nothing
timed); without torch and triton it says so in one line, ``missing_line()``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..files import write_atomic

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT_DIR = ".triton"


@dataclass
class Preview:
    ok: bool
    text: str          # the program(s) or the table, else the message saying why not


def snapshot(text: str, path: Path) -> Path:
    """Write ``text`` where the view's commands read it: ``<folder>/.triton/<name>``."""
    target = Path(path).parent / SNAPSHOT_DIR / Path(path).name
    write_atomic(target, text)
    return target


def missing_line() -> str | None:
    """One line when torch or triton is missing (the program can still be shown, not run), else None."""
    from .triton_backend import missing_packages

    missing = missing_packages()
    if not missing:
        return None
    return (f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed, so the program "
            "cannot run here: pip install -e \".[gpu]\"")


def program(puzzle, text: str, path: Path, timeout: float = 120) -> Preview:
    """The Triton program(s) ``text`` becomes for ``puzzle`` (``gpu-puzzles triton``)."""
    file = snapshot(text, path)
    return _child([sys.executable, "-m", "puzzles", "triton", puzzle.slug, "--file", str(file)], timeout)


def run(puzzle, text: str, path: Path, timeout: float = 600) -> Preview:
    """Graduate mode's table for ``text`` on the Triton back end: on the GPU if there is one, else through
    the interpreter."""
    why = missing_line()
    if why is not None:
        return Preview(False, why)
    file = snapshot(text, path)
    base = [sys.executable, "-m", "puzzles.graduate", puzzle.slug, "--file", str(file), "--backend", "triton",
            "--no-estimates"]
    if shutil.which("nvidia-smi"):
        got = _child(base, timeout)
        if got.ok or "no CUDA GPU" not in got.text:
            return got
    return _child(base + ["--interpret"], timeout)


def _child(argv: list[str], timeout: float) -> Preview:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("TRITON_INTERPRET", None)            # the child chooses (--interpret sets it for its worker)
    try:
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Preview(False, f"stopped after {timeout:.0f} s (a kernel that never ends?)")
    except OSError as e:
        return Preview(False, f"could not start {argv[2]}: {e}")
    out = proc.stdout.rstrip("\n")
    if proc.returncode == 0:
        return Preview(True, out)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("gpu-puzzles")]   # the commands' own messages
    why = "\n".join(lines[-3:]) if lines else f"exit status {proc.returncode}"
    return Preview(False, (out + "\n\n" + why).strip() if out else why)
