"""Compile every kernel of chapter 10's reference solutions (and, with --wrong, its wrong solutions) to sm_90
PTX with numba-cuda's own compiler, for the argument types of each puzzle's cases. No GPU needed.

    /work/wt/ptxvenv/bin/python benchmarks/gpu/compile_ptx_ch10.py [--wrong] [--show KERNEL]

Each line says which kernel compiled for which signature; a kernel numba-cuda rejects prints its error.
A multi-device case's launches take Python ints (ranks, rounds) besides buffers: numba types them int64.
"""

import argparse
import importlib.util
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


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"ptx_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def signatures(puzzle) -> dict[str, set[tuple]]:
    """kernel name -> the distinct numba argument-type tuples its launches use over all cases."""
    out: dict[str, set[tuple]] = {}
    for case in puzzle.make_cases():
        for step in case.launches:
            types = tuple(numba.typeof(v) for v in step.arg_values(case.buffers))
            out.setdefault(step.kernel, set()).add(types)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wrong", action="store_true", help="also compile the wrong solutions")
    ap.add_argument("--show", help="print the PTX of this kernel")
    args = ap.parse_args()
    failures = 0
    for puzzle in all_puzzles():
        if puzzle.chapter != 10:
            continue
        files = [ROOT / "solutions" / puzzle.solution_file]
        if args.wrong:
            files += sorted((ROOT / "tests/puzzles/wrong").glob(puzzle.solution_file[:-3] + "__*.py"))
        sigs = signatures(puzzle)
        for path in files:
            mod = load(path)
            for kernel, variants in sorted(sigs.items()):
                for sig in sorted(variants, key=str):
                    try:
                        ptx, _ = cuda.compile_ptx(getattr(mod, kernel).py_func, sig, cc=(9, 0))
                        status = f"ok ({len(ptx.splitlines())} lines of PTX)"
                        if args.show == kernel:
                            print(ptx)
                    except Exception as e:  # numba's TypingError and friends: report and go on
                        failures += 1
                        status = f"FAILED {type(e).__name__}: {str(e).splitlines()[0][:300]}"
                    print(f"{puzzle.number} {path.relative_to(ROOT)} {kernel}{tuple(map(str, sig))}: {status}",
                          flush=True)
    print("all compiled" if not failures else f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
