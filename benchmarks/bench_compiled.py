"""The compiled back end against the lanes back end and the kernel's own ``numba.njit`` loop: issue 13's
kernels side by side from one run, then (unless ``--quick``) numba's CUDA simulator on the four benchmark
kernels, cost from 2^10 to 2^24 threads with peak RSS, and the cold compile and warm disk-cache start, each
size in a fresh process.

    nice -n 10 python -m benchmarks.bench_compiled --quick     # the two kernels of issue 13 only
    nice -n 10 python -m benchmarks.bench_compiled --write     # everything; rewrite docs/benchmarks.md's section

Both back ends are timed with faults and race detection on, metrics on (``instrument=True``: traffic, counts,
FLOPs, the latency rounds) and off. "Metrics on" leaves the phase trace off, as the lanes column always has,
except for the tiled matmul ("everything on"): its trace keeps snapshots of shared memory, which the compiled
back end does not record (``gpusim.backends.compiled.entry.SHARED_SNAPSHOTS``), so its compiled column is
metrics on without the trace and says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_ONE = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import gpusim
from benchmarks.cases import CASES
name, size, kw, repeat = json.loads(sys.argv[2])
t0 = time.perf_counter()
kern, grid, block, args = CASES[name](size)
first_start = time.perf_counter()
r = gpusim.launch(kern, grid, block, args, **kw)
first = time.perf_counter() - first_start
best = float("inf")
for _ in range(repeat):
    kern, grid, block, args = CASES[name](size)
    t = time.perf_counter()
    r = gpusim.launch(kern, grid, block, args, **kw)
    best = min(best, time.perf_counter() - t)
assert not r.faults, r.faults
print(json.dumps({"first": first, "best": best, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def run_fresh(name: str, size: int, kw: dict, repeat: int = 2, env: dict | None = None) -> dict:
    """One case in a fresh process: its first launch, the best of ``repeat`` more, the peak RSS."""
    out = subprocess.run([sys.executable, "-c", _ONE, str(ROOT), json.dumps([name, size, kw, repeat])],
                         capture_output=True, text=True, timeout=3600, env=dict(os.environ, **(env or {})),
                         cwd=ROOT)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def time_launch(name: str, size: int, repeat: int = 3, threads: int | None = None, **kw) -> float:
    """The best of ``repeat`` launches after a warm-up; ``threads``: ``GPUSIM_THREADS`` for them (else as set:
    every core by default)."""
    import gpusim
    from benchmarks.cases import CASES

    old = os.environ.get("GPUSIM_THREADS")
    if threads is not None:
        os.environ["GPUSIM_THREADS"] = str(threads)
    try:
        return _time_launch(gpusim, CASES, name, size, repeat, kw)
    finally:
        os.environ.pop("GPUSIM_THREADS", None)
        if old is not None:
            os.environ["GPUSIM_THREADS"] = old


def _time_launch(gpusim, CASES, name, size, repeat, kw) -> float:
    kern, grid, block, args = CASES[name](size)
    r = gpusim.launch(kern, grid, block, args, **kw)  # warm-up: compiles
    assert not r.faults, r.faults
    best = float("inf")
    for _ in range(repeat):
        kern, grid, block, args = CASES[name](size)
        t = time.perf_counter()
        gpusim.launch(kern, grid, block, args, **kw)
        best = min(best, time.perf_counter() - t)
    return best


def time_loop(name: str, size: int) -> float:
    """The best of five runs of the kernel's njit loop, after checking that it computes what the compiled back
    end computes (the same output arrays, bit for bit)."""
    import numpy as np

    import gpusim
    from benchmarks.cases import CASES
    from benchmarks.native import loop_of

    loop = loop_of(name)
    kern, grid, block, args = CASES[name](size)
    _, _, _, mine = CASES[name](size)
    gpusim.launch(kern, grid, block, args, backend="compiled", **OFF)
    loop(mine)
    if not all(np.array_equal(x, y) for x, y in zip(args, mine) if isinstance(x, np.ndarray)):
        raise AssertionError(f"benchmarks/native.py's loop for {name!r} computes other values than the kernel")
    return best_of(lambda: loop(mine), 5)


#: (case, size, label, target ratio to the njit loop, bar): issue 13's kernels
NATIVE = [
    ("naive_matmul", 256, "naive matmul 256³ (16×16 blocks, no shared memory)", 4, 10),
    ("map", 1 << 20, "1-D map, 2^20 elements", 20, 100),
    ("matmul16", 256, "256² tiled matmul, 16² tiles", 10, 10),
]
OFF = {"instrument": False}
#: the scaling table's step budget: the default one (``gpusim.limits``) stops a 2^24-thread map
BUDGET = {"max_steps": 1 << 40}


def against_native(targets: list[str], quick: bool = False) -> list[str]:
    rows = ["| kernel | lanes, metrics on | lanes, metrics off | compiled, metrics on | compiled, metrics off | "
            "compiled off, 1 thread | njit loop | compiled on ÷ loop | compiled off ÷ loop | "
            "lanes (on) ÷ compiled (on) | target (bar), compiled on ÷ loop |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    print(rows[0], flush=True)
    for name, size, label, target, bar in NATIVE[:2] if quick else NATIVE:
        lanes_on = time_launch(name, size, repeat=1 if name != "map" else 3, backend="lanes",
                               trace=name == "matmul16")
        lanes_off = time_launch(name, size, repeat=1 if name != "map" else 3, backend="lanes", **OFF)
        on = time_launch(name, size, backend="compiled", trace=False)     # the tiled matmul: its trace is refused
        comp = time_launch(name, size, backend="compiled", **OFF)
        one = time_launch(name, size, backend="compiled", threads=1, **OFF)
        loop = time_loop(name, size)
        ratio, ratio_on = comp / loop, on / loop
        def verdict(r, target=target, bar=bar):
            return "met" if r <= target else ("bar met" if r <= bar else "MISSED")

        rows.append(f"| {label} | {lanes_on * 1e3:,.1f} ms | {lanes_off * 1e3:,.1f} ms | {on * 1e3:,.2f} ms | "
                    f"{comp * 1e3:,.2f} ms | {one * 1e3:,.2f} ms | {loop * 1e3:,.2f} ms | {ratio_on:,.1f}× | "
                    f"{ratio:,.1f}× | {lanes_on / on:,.0f}× | ≤ {target}× (≤ {bar}×): {verdict(ratio_on)} |")
        if name == "matmul16":
            targets.append(f"| 256² tiled matmul, everything on, ≤ 100 ms | compiled, metrics on without the trace "
                           f"(its shared snapshots are not compiled): {on * 1e3:,.0f} ms | "
                           f"{'met without the trace' if on <= 0.1 else 'MISSED'} |")
        else:
            targets.append(f"| compiled ≤ {target}× its njit loop (bar ≤ {bar}×), faults + metrics on: {label} | "
                           f"{ratio_on:,.1f}× | {verdict(ratio_on)} |")
            targets.append(f"| the same with metrics off (faults and races on) | {ratio:,.1f}× | {verdict(ratio)} |")
        print(rows[-1], flush=True)
    return rows


def versus_cudasim(targets: list[str]) -> list[str]:
    from benchmarks.bench_engine import VERSUS, time_cudasim

    rows = ["| kernel | numba CUDA simulator | gpusim compiled, metrics off | speed-up |", "|---|---:|---:|---:|"]
    for name, size, label in VERSUS:
        sim_s, _ = time_cudasim(name, size)
        comp = time_launch(name, size, backend="compiled", **OFF)
        rows.append(f"| {label} | {sim_s:.2f} s | {comp * 1e3:,.2f} ms | {sim_s / comp:,.0f}× |")
        targets.append(f"| ≥ 10,000× numba's simulator (compiled, metrics off): {label} | {sim_s / comp:,.0f}× | "
                       f"{'met' if sim_s / comp >= 10_000 else 'MISSED'} |")
        print(rows[-1], flush=True)
    return rows


def scaling(targets: list[str], largest: int = 24, lanes_largest: int = 22) -> list[str]:
    rows = ["| threads (1-D map, 256/block) | lanes, metrics off | ns/thread | peak RSS | compiled, metrics off | "
            "ns/thread | peak RSS | compiled, everything on | ns/thread | peak RSS |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in range(10, largest + 1, 2):
        n = 1 << p
        comp = run_fresh("map", n, {"backend": "compiled", **OFF, **BUDGET})
        full = run_fresh("map", n, {"backend": "compiled", **BUDGET})
        if p <= lanes_largest:
            lanes = run_fresh("map", n, {"backend": "lanes", **OFF, **BUDGET})
            lcol = (f"{lanes['best'] * 1e3:,.1f} ms | {lanes['best'] / n * 1e9:,.0f} | "
                    f"{lanes['rss'] / 2**20:,.0f} MiB")
        else:
            lcol = "not run | | "
        rows.append(f"| 2^{p} = {n:,} | {lcol} | {comp['best'] * 1e3:,.1f} ms | {comp['best'] / n * 1e9:,.1f} | "
                    f"{comp['rss'] / 2**20:,.0f} MiB | {full['best'] * 1e3:,.1f} ms | {full['best'] / n * 1e9:,.1f} | "
                    f"{full['rss'] / 2**20:,.0f} MiB |")
        if p == 24:
            ok = full["rss"] < 4 * 2**30
            targets.append(f"| 2^24-thread map under 4 GB resident (compiled, everything on) | "
                           f"{full['rss'] / 2**30:.2f} GiB | {'met' if ok else 'MISSED'} |")
        print(rows[-1], flush=True)
    return rows


def cold_and_warm() -> list[str]:
    """The first launch of kernels new to the disk cache (numba compiles them), then the first launch in a
    new process that finds them cached — and once with nothing cached at all (the helpers compile too)."""
    rows = ["| kernel | cold: first launch, compile included | warm: first launch in a new process | "
            "then each launch |", "|---|---:|---:|---:|"]
    cases = [("map", 1 << 20, {"backend": "compiled", **OFF}, "1-D map 2^20"),
             ("naive_matmul", 256, {"backend": "compiled", **OFF}, "naive matmul 256³"),
             ("matmul16", 256, {"backend": "compiled", **OFF}, "tiled matmul 256², 16² tiles")]
    with tempfile.TemporaryDirectory() as d:
        for name, size, kw, label in cases:
            env = {"GPUSIM_CACHE_DIR": d}
            cold = run_fresh(name, size, kw, repeat=1, env=env)
            warm = run_fresh(name, size, kw, repeat=2, env=env)
            rows.append(f"| {label} | {cold['first']:.1f} s | {warm['first']:.2f} s | {warm['best'] * 1e3:,.1f} ms |")
            print(rows[-1], flush=True)
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as nb:
        first = run_fresh("map", 1 << 10, {"backend": "compiled", **OFF}, repeat=0,
                          env={"GPUSIM_CACHE_DIR": d, "NUMBA_CACHE_DIR": nb})
        rows.append(f"| nothing cached (a new install: the compiled back end's helpers compile too), 1-D map | "
                    f"{first['first']:.1f} s | | |")
        print(rows[-1], flush=True)
    return rows


BEGIN, END = "<!-- compiled back end: benchmarks/bench_compiled.py -->", "<!-- end of the compiled back end -->"


def main() -> None:
    import argparse
    import platform

    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="only issue 13's two kernels against their njit loops")
    ap.add_argument("--write", action="store_true", help="rewrite the compiled back end's section of "
                                                         "docs/benchmarks.md")
    args = ap.parse_args()
    targets: list[str] = []
    head = (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, NumPy {np.__version__}, load average {os.getloadavg()[0]:.1f} at the "
            f"start, by `python -m benchmarks.bench_compiled{' --quick' if args.quick else ''}`. "
            "Each time is the best of several launches after a warm-up (which compiles); the njit loop is the "
            "kernel's computation as a plain loop (`benchmarks/native.py`).")
    print(head)
    parts = [BEGIN, "## The compiled back end (issue 13)", "", head, "",
             "### Against the lanes back end and the kernel's own njit loop (same run)", ""]
    parts += against_native(targets, args.quick)
    if not args.quick:
        parts += ["", "### Against numba's CUDA simulator", ""] + versus_cudasim(targets)
        parts += ["", "### Cost from 2^10 to 2^24 threads, each size in a fresh process, with its peak RSS", ""]
        parts += scaling(targets)
        parts += ["", "### Compiling: cold (a kernel new to the disk cache) and warm (cached, a new process)", ""]
        parts += cold_and_warm()
    parts += ["", "### Issue 13's targets", "", "| target | measured | |", "|---|---:|---|"] + targets + [END]
    print("\n".join(parts[-len(targets) - 3:-1]))
    if args.write:
        doc = ROOT / "docs" / "benchmarks.md"
        text = doc.read_text()
        section = "\n".join(parts)
        if BEGIN in text and END in text:
            text = text[:text.index(BEGIN)] + section + text[text.index(END) + len(END):]
        else:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
        doc.write_text(text)
        print(f"wrote {doc}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
