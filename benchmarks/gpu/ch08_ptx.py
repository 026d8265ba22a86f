"""Compile chapter 8's reference kernels to sm_90 PTX with numba-cuda's own compiler (no GPU needed), with the
argument types of every test case, and say what the PTX does with them.

    /work/wt/ptxvenv/bin/python benchmarks/gpu/ch08_ptx.py [--all-files]

For each kernel and distinct signature: whether it compiled, the bytes of local memory (``.local``: register
arrays that did *not* become registers), and the global and shared load instructions by width. gpusim counts
one request per scalar access; a ``ld.global.v2``/``v4`` here would mean the GPU issues fewer. ``--all-files``
also compiles the starters (which must compile too: an untouched starter is valid numba-cuda that does
nothing) and the wrong solutions.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

import numba  # noqa: E402
from numba import cuda  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from puzzles.registry import all_puzzles  # noqa: E402


class _H200:
    compute_capability = (9, 0)


def _without_a_gpu() -> None:
    """Compiling a call to a device function asks the current device for its compute capability, which fails
    on a machine without a GPU; answer sm_90 for it (compile_ptx is told cc=(9, 0) for the kernel itself)."""
    if not cuda.is_available():
        import numba.cuda.dispatcher as dispatcher

        dispatcher.get_current_device = lambda: _H200()


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"ptx_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def summary(ptx: str) -> str:
    local = sum(int(n) for n in re.findall(r"\.local \.align \d+ \.b8 \S+\[(\d+)\]", ptx))
    widths = {}
    for space, vec, _kind in re.findall(r"\bld\.(global|shared)(?:\.nc)?(\.v[24])?\.(\w+)", ptx):
        key = f"ld.{space}{vec}"
        widths[key] = widths.get(key, 0) + 1
    loads = ", ".join(f"{k} x{v}" for k, v in sorted(widths.items()))
    return f"local {local} B; {loads}"


def compile_file(path: Path, puzzle) -> list[str]:
    mod = load(path)
    lines, seen = [], set()
    for case in puzzle.make_cases():
        for step in case.steps:
            sig = tuple(numba.typeof(case.buffers[a]) for a in step.args)
            if (step.kernel, sig) in seen:
                continue
            seen.add((step.kernel, sig))
            kernel = getattr(mod, step.kernel)
            try:
                ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0))
                lines.append(f"  {step.kernel}{sig}: ok; {summary(ptx)}")
            except Exception as e:  # report every failure, keep going
                lines.append(f"  {step.kernel}{sig}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:300]}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--all-files", action="store_true", help="also the starters and the wrong solutions")
    args = ap.parse_args()
    _without_a_gpu()
    failed = 0
    for puzzle in (p for p in all_puzzles() if p.chapter == 8):
        files = [ROOT / "solutions" / puzzle.solution_file]
        if args.all_files:
            files.append(ROOT / "puzzles" / "starters" / puzzle.starter_file)
            files += sorted((ROOT / "tests" / "puzzles" / "wrong").glob(puzzle.solution_file[:-3] + "__*.py"))
        for path in files:
            print(f"{puzzle.number} {puzzle.slug}: {path.relative_to(ROOT)}")
            for line in compile_file(path, puzzle):
                failed += "FAILED" in line
                print(line)
    print("all compiled" if not failed else f"{failed} signatures failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
