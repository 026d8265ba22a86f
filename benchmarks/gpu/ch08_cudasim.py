"""Run chapter 8's reference solutions under numba's own CUDA simulator (NUMBA_ENABLE_CUDASIM=1) on their
smallest cases, and compare with the puzzle's spec and with gpusim's output.

    python benchmarks/gpu/ch08_cudasim.py [--cases N]

numba's simulator runs one OS thread per CUDA thread, so only the first N cases (default 2: the worked
example and the first random one) are run; that is enough to show numba itself accepts and runs each kernel
as written. The environment variable is set here, before numba is imported.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from puzzles.registry import all_puzzles  # noqa: E402


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"cudasim_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_numba(mod, case) -> dict:
    bufs = copy.deepcopy(dict(case.buffers))
    for step in case.steps:
        getattr(mod, step.kernel)[step.grid, step.block](*[bufs[a] for a in step.args])
    return bufs


def run_gpusim(path: Path, puzzle, case) -> dict:
    import gpusim
    from puzzles.loader import load_solution

    kernels = load_solution(path, puzzle.kernels).kernels
    bufs = copy.deepcopy(dict(case.buffers))
    for step in case.steps:
        gpusim.launch(kernels[step.kernel], step.grid, step.block, [bufs[a] for a in step.args],
                      instrument=False)
    return bufs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=2)
    args = ap.parse_args()
    failures = 0
    for puzzle in (p for p in all_puzzles() if p.chapter == 8):
        path = ROOT / "solutions" / puzzle.solution_file
        mod = load(path)
        for case in puzzle.make_cases()[: args.cases]:
            t0 = time.perf_counter()
            got = run_numba(mod, case)
            seconds = time.perf_counter() - t0
            expected = puzzle.spec(**copy.deepcopy(dict(case.buffers)))
            sim = run_gpusim(path, puzzle, case)
            verdicts = []
            for name in puzzle.outputs:
                g, e, s = np.asarray(got[name]), np.asarray(expected[name]), np.asarray(sim[name])
                ok = np.allclose(g, e, rtol=puzzle.rtol, atol=puzzle.atol) if e.dtype.kind == "f" else \
                    np.array_equal(g, e)
                same = np.array_equal(g, s, equal_nan=True)
                verdicts.append(f"{name}: {'matches the spec' if ok else 'DIFFERS from the spec'}, "
                                f"{'bit-identical to gpusim' if same else 'NOT identical to gpusim'}")
                failures += (not ok) + (not same)
            print(f"{puzzle.number} {puzzle.slug:26s} {case.name:36s} {seconds:6.1f} s  " + "; ".join(verdicts),
                  flush=True)
    print("all agree" if not failures else f"{failures} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
