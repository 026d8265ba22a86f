"""On a real GPU: every reference solution against fresh cases (several check seeds), and the slips the new cases
exist for, so that what the judge demands is what the hardware does.

    python3 benchmarks/gpu/run_fresh_cases.py [--seeds 1 2 3] [--only SLUG ...]

For each seed and puzzle: run the reference through numba-cuda on the GPU with ``make_cases(case_generator(
seed))`` and compare with the spec at the puzzle's tolerance. Then the case-strength wrong solutions
(tests/puzzles/wrong/, listed below) must fail on the GPU in the case named, and the constructs numba-cuda
accepts that the judge must accept (an eager signature, a threadIdx alias, a per-lane tuple, cuda.selp,
cuda.libdevice) must give puzzle 1's answer. One line per item; the last line counts failures.
"""

import argparse
import sys
import textwrap
import types
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "gpu"))

from run_solutions import load, run_case  # noqa: E402

from puzzles.checker import case_generator  # noqa: E402
from puzzles.registry import all_puzzles, get  # noqa: E402

SLIPS = [  # (wrong solution, the one case that must fail)
    ("layernorm__eps_outside_sqrt.py", "small variance 3x64"),
    ("online_softmax__max_starts_at_zero.py", "very negative 6x24"),
    ("cross_entropy__max_starts_at_zero.py", "very negative 4x40"),
    ("paged_attention__pads_the_max_with_zero.py", "negative scores"),
]
ACCEPTED = {
    "eager signature": ('@cuda.jit("void(float32[:], float32[:])")',
                        "    i = cuda.threadIdx.x\n    out[i] = a[i] + 10"),
    "threadIdx alias": ("@cuda.jit", "    tid = cuda.threadIdx\n    i = tid.x\n    out[i] = a[i] + 10"),
    "per-lane tuple": ("@cuda.jit", "    i = cuda.threadIdx.x\n    out[i] = a[i] + TEN[i]"),
    "cuda.selp": ("@cuda.jit", "    i = cuda.threadIdx.x\n    out[i] = a[i] + cuda.selp(i >= 0, 10.0, 0.0)"),
    "cuda.libdevice": ("@cuda.jit", "    i = cuda.threadIdx.x\n    out[i] = cuda.libdevice.fadd_rn(a[i], 10.0)"),
}


def failing_case(mod, puzzle, case) -> str | None:
    """``run_case``, with an exception (numba's simulator raises where a GPU returns inf) as a failure."""
    try:
        return run_case(mod, puzzle, case)
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"


def module_from(source: str, name: str):
    mod = types.ModuleType(name)
    path = Path("/tmp") / f"{name}.py"          # numba-cuda reads the source for line info
    path.write_text(source)
    exec(compile(source, str(path), "exec"), mod.__dict__)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", nargs="*", type=int, default=[1, 2, 3])
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    failures = 0
    for p in all_puzzles():
        if args.only and p.slug not in args.only:
            continue
        mod = load(ROOT / "solutions" / p.solution_file)
        bad = []
        for seed in args.seeds:
            for case in p.make_cases(case_generator(seed)):
                err = failing_case(mod, p, case)
                if err:
                    bad.append(f"seed {seed} {case.name}: {err}")
        failures += bool(bad)
        print(f"{p.number:3d} {p.slug:24s} {'pass' if not bad else 'FAIL ' + bad[0]}"
              f"{f' (+{len(bad) - 1} more)' if len(bad) > 1 else ''}", flush=True)
    for name, case_name in SLIPS:
        slug = name.split("__")[0].replace("_", "-")
        p = get(slug)
        mod = load(ROOT / "tests" / "puzzles" / "wrong" / name)
        failed = [c.name for c in p.make_cases(case_generator(args.seeds[0])) if failing_case(mod, p, c)]
        ok = failed == [case_name]
        failures += not ok
        print(f"slip {name:44s} {'fails only in ' + case_name if ok else 'UNEXPECTED: fails in ' + str(failed)}")
    p = get("map")
    for label, (decorator, body) in ACCEPTED.items():
        source = f"from numba import cuda\n\nTEN = (10.0,) * 256\n\n\n{decorator}\ndef map_kernel(out, a):\n{body}\n"
        try:
            mod = module_from(textwrap.dedent(source), "accepted_" + label.replace(" ", "_").replace(".", "_"))
            errs = [failing_case(mod, p, c) for c in p.make_cases(case_generator(args.seeds[0]))]
            status = "runs and is right" if not any(errs) else f"WRONG: {next(e for e in errs if e)}"
        except Exception as e:
            status = f"ERROR {type(e).__name__}: {str(e).splitlines()[0][:160]}"
        failures += not status.startswith("runs")
        print(f"accept {label:18s} {status}")
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
