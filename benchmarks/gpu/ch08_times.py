"""Time chapter 8's kernels on a GPU at graduate-mode sizes, beside cuBLAS (torch.matmul, float32, no TF32),
and the variants the chapter's stars tell apart, so the descriptions can quote measured numbers.

    python3 benchmarks/gpu/ch08_times.py [--side 4096] [--repeat 10] [--json out.json]

One line per kernel: the median time of ``--repeat`` launches (each timed from launch to synchronize, after
a warm-up launch), GFLOP/s (2 m n k / time; the int8 puzzle counts multiply-adds the same way), the result
checked against the spec, and the ratio to cuBLAS at the same float32 shape. Variants are a reference with
one change (the same changes tests/puzzles/test_ch08_matmul_stars.py makes):

* 48 column-major: the worklog's kernel 1 (a warp walks down a column of c)
* 51 vs 52: blocked against interleaved ownership (bank conflicts, strided stores)
* 50 vs 54: one buffer and two barriers per step against two buffers and one
* 53 unpadded: the b word tile without its padding column (32-way bank conflicts)

Runs on the CPU too, for a smoke test, under numba's simulator at a tiny size:
``NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu/ch08_times.py --side 64 --repeat 1 --only matmul-coalesced
matmul-conflict-free`` (times meaningless; split-K's bench has k = 4096, far too slow for the simulator).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from puzzles.registry import all_puzzles  # noqa: E402

VARIANTS = {   # slug -> [(name, [(old, new), ...])]
    "matmul-coalesced": [("column-major (worklog kernel 1)",
                          [("r = t // n\n        j = t % n", "r = t % m\n        j = t // m")])],
    "matmul-conflict-free": [("blocked ownership (puzzle 51's layout)",
                              [("ra[i] = sa[ty + TY * i, q]", "ra[i] = sa[ty * TM + i, q]"),
                               ("rb[j] = sb[q, tx + TX * j]", "rb[j] = sb[q, tx * TN + j]"),
                               ("r = r0 + ty + TY * i", "r = r0 + ty * TM + i"),
                               ("col = c0 + tx + TX * j", "col = c0 + tx * TN + j")])],
    "matmul-wide-loads": [("unpadded b word tile",
                           [("sb = cuda.shared.array((TILE, PADDED), numba.int32)",
                             "sb = cuda.shared.array((TILE, WORDS), numba.int32)")])],
    "matmul-double-buffer": [("two buffers, second barrier kept",
                              [("        cur = s % 2\n        if s + 1 < steps:",
                                "        cur = s % 2\n        cuda.syncthreads()\n        if s + 1 < steps:")])],
}


def load_source(source: str, name: str):
    folder = Path(tempfile.mkdtemp(prefix="ch08_times_"))
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def time_case(mod, case, repeat: int) -> tuple[float, dict]:
    dev = {k: cuda.to_device(v) if isinstance(v, np.ndarray) else v for k, v in case.buffers.items()}

    def launch():
        for step in case.steps:
            getattr(mod, step.kernel)[step.grid, step.block](*[dev[a] for a in step.args])
        cuda.synchronize()

    launch()   # compile and warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        launch()
        times.append(time.perf_counter() - t0)
    out = {k: v.copy_to_host() if hasattr(v, "copy_to_host") else v for k, v in dev.items()}
    return statistics.median(times), out


def flops_of(case) -> float:
    b = case.buffers
    if "a4" in b:
        m, n, k = b["a4"].shape[0], b["b4"].shape[0], b["a4"].shape[1] * 4
    else:
        (m, k), n = b["a"].shape, b["b"].shape[1]
    return 2.0 * m * n * k


def cublas_seconds(case, repeat: int) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    b = case.buffers
    if "a4" in b:
        m, n, k = b["a4"].shape[0], b["b4"].shape[0], b["a4"].shape[1] * 4
    else:
        (m, k), n = b["a"].shape, b["b"].shape[1]
    torch.backends.cuda.matmul.allow_tf32 = False
    x = torch.randn(m, k, device="cuda")
    y = torch.randn(k, n, device="cuda")
    torch.matmul(x, y)
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        torch.matmul(x, y)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def check(puzzle, case, out) -> str:
    expected = puzzle.spec(**copy.deepcopy(dict(case.buffers)))
    for name in puzzle.outputs:
        g, e = np.asarray(out[name]), np.asarray(expected[name])
        ok = np.allclose(g, e, rtol=puzzle.rtol, atol=puzzle.atol) if e.dtype.kind == "f" else np.array_equal(g, e)
        if not ok:
            return f"WRONG {name}"
    return "ok"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", type=int, default=4096, help="c is about side x side")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--json")
    ap.add_argument("--only", nargs="*", help="puzzle slugs")
    args = ap.parse_args()
    rows, bad = [], 0
    for puzzle in (p for p in all_puzzles() if p.chapter == 8 and (not args.only or p.slug in args.only)):
        case = puzzle.bench(args.side * args.side)
        reference = (ROOT / "solutions" / puzzle.solution_file).read_text()
        kernels = [("reference", reference)]
        for name, edits in VARIANTS.get(puzzle.slug, []):
            source = reference
            for old, new in edits:
                assert source.count(old) == 1, (puzzle.slug, old)
                source = source.replace(old, new)
            kernels.append((name, source))
        base = cublas_seconds(case, args.repeat)
        for i, (name, source) in enumerate(kernels):
            mod = load_source(source, f"{puzzle.solution_file[:-3]}_{i}")
            seconds, out = time_case(mod, case, args.repeat)
            verdict = check(puzzle, case, out)
            bad += verdict != "ok"
            gflops = flops_of(case) / seconds / 1e9
            ratio = f"{base / seconds:6.1%} of cuBLAS fp32" if base else "no torch"
            row = {"number": puzzle.number, "slug": puzzle.slug, "kernel": name, "case": case.name,
                   "ms": round(seconds * 1e3, 3), "gflops": round(gflops, 1), "check": verdict,
                   "cublas_ms": round(base * 1e3, 3) if base else None}
            rows.append(row)
            print(f"{puzzle.number} {puzzle.slug:26s} {name:38s} {case.name:34s} {seconds * 1e3:9.3f} ms "
                  f"{gflops:9.1f} GFLOP/s  {ratio}  {verdict}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
