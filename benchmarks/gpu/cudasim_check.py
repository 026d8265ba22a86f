"""Run reference solutions under numba's own CUDA simulator and compare with the puzzle's spec.

    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu/cudasim_check.py [slug ...]   (default: chapter 11)

A second, independent interpreter of the same numba-cuda source: it runs each reference on its puzzle's
smallest case (fewest threads; numba's simulator runs one OS thread per CUDA thread). Kernels that use warp
shuffles or votes are reported as skipped: the simulator does not implement them.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import math
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from puzzles.compare import first_mismatch  # noqa: E402
from puzzles.registry import all_puzzles  # noqa: E402

CHAPTER = 11
WARP_OPS = re.compile(r"\bcuda\.(shfl\w*|ballot_sync|any_sync|all_sync|eq_sync|syncwarp|activemask)\b")


def threads(case) -> int:
    def size(d):
        return math.prod((d,) if isinstance(d, int) else d)
    return max(size(s.grid) * size(s.block) for s in case.steps)


def main() -> int:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        raise SystemExit("run with NUMBA_ENABLE_CUDASIM=1")
    ap = argparse.ArgumentParser()
    ap.add_argument("slugs", nargs="*")
    args = ap.parse_args()
    failed = 0
    for puzzle in all_puzzles():
        if not (puzzle.slug in args.slugs if args.slugs else puzzle.chapter == CHAPTER):
            continue
        path = ROOT / "solutions" / puzzle.solution_file
        if WARP_OPS.search(path.read_text()):
            print(f"{puzzle.number:3d} {puzzle.slug:22s} skipped: uses warp shuffles or votes")
            continue
        spec = importlib.util.spec_from_file_location(f"sim_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        case = min(puzzle.make_cases(), key=threads)
        buffers = copy.deepcopy(dict(case.buffers))
        started = time.perf_counter()
        for step in case.steps:
            grid = (step.grid,) if isinstance(step.grid, int) else tuple(step.grid)
            block = (step.block,) if isinstance(step.block, int) else tuple(step.block)
            getattr(module, step.kernel)[grid, block](*(buffers[a] for a in step.args))
        expected = puzzle.spec(**copy.deepcopy(dict(case.buffers)))
        mismatch = first_mismatch(puzzle.outputs, buffers, expected, case.buffers, puzzle.rtol, puzzle.atol)
        status = "matches the spec" if mismatch is None else f"MISMATCH: {mismatch.message}"
        failed += mismatch is not None
        print(f"{puzzle.number:3d} {puzzle.slug:22s} case {case.name!r} ({threads(case)} threads): {status} "
              f"({time.perf_counter() - started:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
