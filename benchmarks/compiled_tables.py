"""The compiled back end's tables for ``python -m benchmarks.bench_engine``: against the kernel's own njit loop
(issue 13's targets), against numba's CUDA simulator, cost from 2^10 to 2^24 threads with peak RSS, and the
cold compile and warm disk-cache start, each measured in a fresh process."""

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


def time_launch(name: str, size: int, repeat: int = 3, **kw) -> float:
    import gpusim
    from benchmarks.cases import CASES

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
    from benchmarks.cases import CASES
    from benchmarks.native import loop_of

    loop = loop_of(name)
    _, _, _, args = CASES[name](size)
    loop(args)
    return best_of(lambda: loop(args), 5)


#: (case, size, launch options, label, target ratio to the njit loop, bar)
NATIVE = [
    ("naive_matmul", 256, {"trace": False}, "naive matmul 256³ (16×16 blocks, no shared memory), faults + metrics on",
     4, 10),
    ("map", 1 << 20, {"trace": False}, "1-D map, 2^20 elements, faults + metrics on", 20, 100),
    ("matmul16", 256, {}, "256² tiled matmul, 16² tiles, everything on (trace too)", 10, 10),
]


def against_native(targets: list[str]) -> list[str]:
    rows = ["| kernel | lanes | compiled | njit loop | compiled ÷ loop | target (bar) |",
            "|---|---:|---:|---:|---:|---|"]
    for name, size, kw, label, target, bar in NATIVE:
        lanes = time_launch(name, size, repeat=1 if name != "map" else 3, backend="lanes", **kw)
        comp = time_launch(name, size, backend="compiled", **kw)
        loop = time_loop(name, size)
        ratio = comp / loop
        met = "met" if ratio <= target else ("bar met" if ratio <= bar else "MISSED")
        rows.append(f"| {label} | {lanes * 1e3:,.1f} ms | {comp * 1e3:,.1f} ms | {loop * 1e3:,.2f} ms | "
                    f"{ratio:,.0f}× | ≤ {target}× (≤ {bar}×): {met} |")
        targets.append(f"| compiled ≤ {target}× its njit loop (bar ≤ {bar}×): {label} | {ratio:,.0f}× | {met} |")
        if name == "matmul16":
            ok = comp <= 0.1
            targets.append(f"| 256² tiled matmul, everything on, ≤ 100 ms | {comp * 1e3:,.0f} ms | "
                           f"{'met' if ok else 'MISSED'} |")
        print(rows[-1], flush=True)
    return rows


def scaling(targets: list[str], largest: int = 24, lanes_largest: int = 22) -> list[str]:
    rows = ["| threads (1-D map, 256/block) | lanes | ns/thread | peak RSS | compiled | ns/thread | peak RSS |",
            "|---:|---:|---:|---:|---:|---:|---:|"]
    for p in range(10, largest + 1, 2):
        n = 1 << p
        comp = run_fresh("map", n, {"backend": "compiled"})
        if p <= lanes_largest:
            lanes = run_fresh("map", n, {"backend": "lanes"})
            lcol = (f"{lanes['best'] * 1e3:,.1f} ms | {lanes['best'] / n * 1e9:,.0f} | "
                    f"{lanes['rss'] / 2**20:,.0f} MiB")
        else:
            lcol = "not run | | "
        rows.append(f"| 2^{p} = {n:,} | {lcol} | {comp['best'] * 1e3:,.1f} ms | {comp['best'] / n * 1e9:,.1f} | "
                    f"{comp['rss'] / 2**20:,.0f} MiB |")
        if p == 24:
            ok = comp["rss"] < 4 * 2**30
            targets.append(f"| 2^24-thread map, everything on, under 4 GB resident (compiled) | "
                           f"{comp['rss'] / 2**30:.2f} GiB | {'met' if ok else 'MISSED'} |")
        print(rows[-1], flush=True)
    return rows


def cold_and_warm() -> list[str]:
    """The first launch of kernels new to the disk cache (numba compiles them), then the first launch in a
    new process that finds them cached — and once with nothing cached at all (the helpers compile too)."""
    rows = ["| kernel | cold: first launch, compile included | warm: first launch in a new process | "
            "then each launch |", "|---|---:|---:|---:|"]
    cases = [("map", 1 << 20, {"backend": "compiled"}, "1-D map 2^20"),
             ("naive_matmul", 256, {"backend": "compiled", "trace": False}, "naive matmul 256³"),
             ("matmul16", 256, {"backend": "compiled"}, "tiled matmul 256², 16² tiles")]
    with tempfile.TemporaryDirectory() as d:
        for name, size, kw, label in cases:
            env = {"GPUSIM_CACHE_DIR": d}
            cold = run_fresh(name, size, kw, repeat=1, env=env)
            warm = run_fresh(name, size, kw, repeat=2, env=env)
            rows.append(f"| {label} | {cold['first']:.1f} s | {warm['first']:.2f} s | {warm['best'] * 1e3:,.1f} ms |")
            print(rows[-1], flush=True)
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as nb:
        first = run_fresh("map", 1 << 10, {"backend": "compiled"}, repeat=0,
                          env={"GPUSIM_CACHE_DIR": d, "NUMBA_CACHE_DIR": nb})
        rows.append(f"| nothing cached (a new install: the compiled back end's helpers compile too), 1-D map | "
                    f"{first['first']:.1f} s | | |")
        print(rows[-1], flush=True)
    return rows
