"""Compile reference kernels to sm_90 PTX with numba-cuda's real compiler, without a GPU.

    python benchmarks/gpu/compile_ptx.py [slug ...]        (default: every puzzle of chapter 11)

Run it with a Python whose numba-cuda has NVVM (the shared `/work/wt/ptxvenv`, or `pip install
"numba-cuda[cu13]"`). Each kernel is compiled with the argument types of the puzzle's first case (NumPy
arrays as numba infers them, scalars as their NumPy or Python type), so whatever numba-cuda rejects —
an unsupported construct, a type that does not unify — fails here as it would on the GPU. Prints one line
per kernel and exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import traceback
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

import numba  # noqa: E402
from numba import cuda  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from puzzles.registry import all_puzzles  # noqa: E402

CHAPTER = 11
CC = (9, 0)


class _NoGpu:
    """Stands in for the current device when there is none: numba-cuda asks it for the compute capability
    when a kernel calls a `@cuda.jit(device=True)` function (compile_ptx itself takes `cc`)."""

    compute_capability = CC


def _allow_device_functions_without_a_gpu() -> None:
    from numba.cuda import dispatcher

    try:
        cuda.get_current_device()
    except Exception:
        dispatcher.get_current_device = _NoGpu


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"ptx_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def numba_type(value):
    if isinstance(value, np.ndarray):
        return numba.typeof(value)
    if isinstance(value, np.generic):
        return numba.from_dtype(value.dtype)
    return numba.typeof(value)          # a Python int is int64, a Python float float64, as at launch


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("slugs", nargs="*")
    args = ap.parse_args()
    _allow_device_functions_without_a_gpu()
    puzzles = [p for p in all_puzzles() if (p.slug in args.slugs if args.slugs else p.chapter == CHAPTER)]
    failed = 0
    for puzzle in puzzles:
        module = load(ROOT / "solutions" / puzzle.solution_file)
        case = puzzle.make_cases()[0]
        for step in case.steps:
            kernel = getattr(module, step.kernel)
            signature = tuple(numba_type(case.buffers[name]) for name in step.args)
            try:
                ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=CC)
                lines = ptx.count("\n")
                print(f"{puzzle.number:3d} {puzzle.slug:22s} {step.kernel:22s} ok ({lines} lines of PTX)")
            except Exception as e:
                failed += 1
                print(f"{puzzle.number:3d} {puzzle.slug:22s} {step.kernel:22s} FAILED: {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:300]}")
                traceback.print_exc(limit=1)
    print(f"{sum(len(p.kernels) for p in puzzles) - failed} compiled, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
