"""Run chapter 10's reference solutions under numba's own CUDA simulator and compare with the puzzles' specs.

    NUMBA_ENABLE_CUDASIM=1 python3 benchmarks/gpu/cudasim_ch10.py [--cases N] [--only SLUG ...]

A multi-device case runs as one GPU would run it: its launches in issue order (its Sync steps are no-ops
here), every array in one memory. numba's simulator runs one OS thread per CUDA thread, so only each
puzzle's N smallest cases (by threads launched, default 1) are run. This checks that the references are
valid numba-cuda as numba itself executes it: its typing, its integer rules, Python ints as kernel
arguments. (It cannot check what it does not model: races, barriers, devices.)
"""

import argparse
import copy
import importlib.util
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from puzzles.compare import first_mismatch  # noqa: E402
from puzzles.multidevice import output_names  # noqa: E402
from puzzles.registry import all_puzzles  # noqa: E402


def _count(d) -> int:
    return math.prod((d,) if isinstance(d, int) else d)


def threads(case) -> int:
    return sum(_count(s.grid) * _count(s.block) for s in case.launches)


def run(mod, case) -> dict:
    buffers = copy.deepcopy(dict(case.buffers))
    for step in case.launches:
        grid = (step.grid,) if isinstance(step.grid, int) else tuple(step.grid)
        block = (step.block,) if isinstance(step.block, int) else tuple(step.block)
        getattr(mod, step.kernel)[grid, block, 0, step.shared_mem](*step.arg_values(buffers))
    return buffers


def main() -> int:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        raise SystemExit("run with NUMBA_ENABLE_CUDASIM=1")
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=1)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    failures = 0
    for puzzle in all_puzzles():
        if puzzle.chapter != 10 or (args.only and puzzle.slug not in args.only):
            continue
        path = ROOT / "solutions" / puzzle.solution_file
        spec = importlib.util.spec_from_file_location(f"cudasim_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for case in sorted(puzzle.make_cases(), key=threads)[: args.cases]:
            started = time.perf_counter()
            try:
                got = run(mod, case)
                expected = puzzle.spec(**copy.deepcopy(dict(case.buffers)))
                mismatch = first_mismatch(output_names(puzzle, case.buffers), got, expected, case.buffers,
                                          puzzle.rtol, puzzle.atol)
                status = "pass" if mismatch is None else f"FAIL {mismatch.message}"
            except Exception as e:  # report and go on to the next case
                status = f"ERROR {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            failures += status != "pass"
            print(f"{puzzle.number} {puzzle.slug:20s} {case.name:30s} {threads(case):7d} threads  {status}  "
                  f"({time.perf_counter() - started:.1f} s)", flush=True)
    print("all passed" if not failures else f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
