"""gpusim against numba's CUDA simulator, and how gpusim scales. Prints Markdown tables from one run.

    python -m benchmarks.bench_engine              # print the tables
    python -m benchmarks.bench_engine --write      # also rewrite docs/benchmarks.md
    python -m benchmarks.bench_engine --baseline DIR   # also time the gpusim in DIR, side by side

``--baseline`` takes a folder holding another version's ``gpusim`` and ``benchmarks`` packages (for example
``git archive REV gpusim benchmarks | tar -x -C DIR``); both run in the same session, alternately, so the
ratio holds however busy the machine is.

numba's simulator runs in a subprocess with NUMBA_ENABLE_CUDASIM=1 on the same kernels and inputs
(benchmarks/kernels.py, benchmarks/cases.py). gpusim runs with fault detection and instrumentation on
(the defaults); each gpusim time is the best of three launches after one warm-up (which compiles).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gpusim  # noqa: E402
from benchmarks.cases import CASES  # noqa: E402

VERSUS = [("map", 1 << 14, "1-D map, 2^14 elements"), ("map", 1 << 16, "1-D map, 2^16 elements"),
          ("block_sum", 1 << 12, "shared-memory block sum, 2^12 elements, 256 threads/block"),
          ("matmul", 32, "32x32 tiled matmul, 8x8 tiles")]


def time_gpusim(name: str, size: int, repeat: int = 3, **kw) -> tuple[float, gpusim.LaunchReport, float]:
    kern, grid, block, args = CASES[name](size)
    gpusim.launch(kern, grid, block, args, **kw)  # warm-up: compiles
    best = float("inf")
    report = None
    for _ in range(repeat):
        kern, grid, block, args = CASES[name](size)
        t0 = time.perf_counter()
        report = gpusim.launch(kern, grid, block, args, **kw)
        best = min(best, time.perf_counter() - t0)
    assert report is not None and not report.faults, report.faults if report else None
    return best, report, float(args[-1].sum())


def time_cudasim(name: str, size: int) -> tuple[float, float]:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run_cudasim.py"), name, str(size)],
                         capture_output=True, text=True, env=env, check=True, timeout=1800)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return data["seconds"], data["checksum"]


TARGETS: list[str] = []
#: the 256x256 matmul does 2.1e9 steps of work, past a launch's default budget (2e9): it gets the budget of the
#: puzzles' checks
BIG = {"max_steps": 5_000_000_000}


def versus(quick: bool) -> list[str]:
    rows = ["| kernel | numba CUDA simulator | gpusim | speed-up | same output |",
            "|---|---:|---:|---:|:---:|"]
    for name, size, label in VERSUS:
        if quick and size > 1 << 14 and name == "map":
            continue
        sim_s, sim_sum = time_cudasim(name, size)
        g_s, _, g_sum = time_gpusim(name, size)
        same = "yes" if np.isclose(sim_sum, g_sum, rtol=1e-5) else "NO"
        rows.append(f"| {label} | {sim_s:.2f} s | {g_s * 1e3:.1f} ms | {sim_s / g_s:,.0f}x | {same} |")
        TARGETS.append(f"| at least 100x numba's simulator: {label} | {sim_s / g_s:,.0f}x | "
                       f"{'met' if sim_s / g_s >= 100 else 'MISSED'} |")
        print(rows[-1], flush=True)
    return rows


def scaling() -> list[str]:
    rows = ["| threads (1-D map, 256/block) | gpusim, faults + metrics on | ns per thread | gpusim, metrics off |",
            "|---:|---:|---:|---:|"]
    for p in range(10, 23, 2):
        n = 1 << p
        t_on, _, _ = time_gpusim("map", n, repeat=2)
        t_off, _, _ = time_gpusim("map", n, repeat=2, instrument=False)
        rows.append(f"| 2^{p} = {n:,} | {t_on * 1e3:.1f} ms | {t_on / n * 1e9:.0f} | {t_off * 1e3:.1f} ms |")
        if p == 20:
            TARGETS.append(f"| 2^20-thread map under 1 s (faults and metrics on) | {t_on:.2f} s | "
                           f"{'met' if t_on < 1 else 'MISSED'} |")
        print(rows[-1], flush=True)
    t, _, _ = time_gpusim("matmul", 256, repeat=1, trace=False, **BIG)
    t2, _, _ = time_gpusim("matmul", 256, repeat=1, **BIG)
    rows.append("")
    rows.append("| 256x256 tiled matmul, 8x8 tiles | seconds |")
    rows.append("|---|---:|")
    rows.append(f"| faults + metrics + trace on | {t2:.2f} s |")
    rows.append(f"| faults + metrics on, trace off | {t:.2f} s |")
    TARGETS.append(f"| 256x256 tiled matmul under 5 s (everything on) | {t2:.2f} s | {'met' if t2 < 5 else 'MISSED'} |")
    print("\n".join(rows[-4:]), flush=True)
    return rows


_TIMER = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import gpusim
from benchmarks.cases import CASES
name, size, kw, repeat = json.loads(sys.argv[2])
kern, grid, block, args = CASES[name](size)
gpusim.launch(kern, grid, block, args, **kw)
best = float("inf")
for _ in range(repeat):
    kern, grid, block, args = CASES[name](size)
    t0 = time.process_time()
    gpusim.launch(kern, grid, block, args, **kw)
    best = min(best, time.process_time() - t0)
print(best)
"""

BASELINE_CASES = [("map", 1 << 16, {}, "1-D map, 2^16 threads"), ("map", 1 << 20, {}, "1-D map, 2^20 threads"),
                  ("map", 1 << 20, {"instrument": False}, "1-D map, 2^20 threads, metrics off"),
                  ("block_sum", 1 << 12, {}, "shared-memory block sum, 2^12"),
                  ("matmul", 32, {}, "32x32 tiled matmul"),
                  ("matmul", 256, {"trace": False, **BIG}, "256x256 tiled matmul")]


def against(baseline: Path) -> list[str]:
    """The gpusim in ``baseline`` against this one: CPU seconds, the best of many launches in rounds that
    alternate between the two (a busy machine slows some launches, never speeds one up)."""
    rows = ["| kernel | baseline | this gpusim | ratio |", "|---|---:|---:|---:|"]
    for name, size, kw, label in BASELINE_CASES:
        repeat = 4 if size >= 256 and name == "matmul" else 15
        best = {}
        for _ in range(3 if repeat < 15 else 5):
            for tag, root in (("base", baseline), ("new", ROOT)):
                out = subprocess.run([sys.executable, "-c", _TIMER, str(root), json.dumps([name, size, kw, repeat])],
                                     capture_output=True, text=True, check=True, timeout=1800, cwd=root)
                best[tag] = min(best.get(tag, float("inf")), float(out.stdout.strip().splitlines()[-1]))
        rows.append(f"| {label} | {best['base'] * 1e3:.1f} ms | {best['new'] * 1e3:.1f} ms | "
                    f"{best['new'] / best['base']:.2f} |")
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite docs/benchmarks.md with the tables")
    ap.add_argument("--quick", action="store_true", help="skip the slowest numba-simulator case")
    ap.add_argument("--skip-numba", action="store_true", help="only the gpusim scaling table")
    ap.add_argument("--baseline", type=Path, help="a folder with another version's gpusim, timed alongside")
    ap.add_argument("--baseline-label", default="", help="what the baseline is, for the table's heading")
    args = ap.parse_args()
    head = (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, NumPy {np.__version__}.")
    print(head)
    load_start = os.getloadavg()[0]
    parts = [head, ""]
    if not args.skip_numba:
        parts += ["## gpusim against numba's CUDA simulator (same kernels, same inputs)", ""] + versus(args.quick)
        parts.append("")
    parts += ["## Scaling", ""] + scaling()
    if args.baseline is not None:
        label = f" ({args.baseline_label})" if args.baseline_label else ""
        parts += ["", f"## Against the baseline{label}, same session, CPU time", ""] + against(args.baseline)
    parts += ["", "## Targets (issue 2 and issue 3)", "", "| target | measured | |", "|---|---:|---|"] + TARGETS
    print("\n".join(parts[-len(TARGETS) - 2:]))
    # the machine's other work slows the absolute times (wall clock, best of a few launches); the baseline
    # table alternates the two engines and takes CPU time, so its ratios hold
    load = (f"Load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, on "
            f"{os.cpu_count()} cores.")
    print(load)
    parts[0] += " " + load
    if args.write:
        doc = ROOT / "docs" / "benchmarks.md"
        how = "python -m benchmarks.bench_engine --write"
        if args.baseline is not None:
            how += " --baseline DIR"
            if args.baseline_label:
                how += f" --baseline-label '{args.baseline_label}'"
        # the sections other benchmarks write (bench_compiled's, between its markers) stay as they are
        kept = ""
        if doc.is_file() and "\n<!-- " in doc.read_text():
            old = doc.read_text()
            kept = "\n" + old[old.index("\n<!-- ") + 1:]
        doc.write_text(f"# Benchmarks\n\nReproduce with `{how}`.\n\n" + "\n".join(parts) + "\n" + kept)
        print(f"wrote {doc}")


if __name__ == "__main__":
    main()
