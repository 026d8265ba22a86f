"""What several simulated devices cost: a ring all-reduce (puzzle 64's reference kernels) through
``gpusim.System`` (link counting and the race checker between devices) beside the same launches through
plain ``gpusim.launch``, from one run.

    python -m benchmarks.bench_devices [--ranks 8] [--n 65536]

Prints seconds for each and the ratio (System / plain). Both run with gpusim's instrumentation on.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np

import gpusim

ROOT = Path(__file__).resolve().parents[1]


def _reference():
    """Puzzle 64's reference kernels (solutions/ring_all_reduce.py)."""
    spec = importlib.util.spec_from_file_location("bench_ring_all_reduce", ROOT / "solutions" / "ring_all_reduce.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ring(ref, launch, xs, ranks, chunk, sync) -> None:
    grid = -(-chunk // ref.TPB)
    for kernel in (ref.reduce_step, ref.gather_step):
        for s in range(ranks - 1):
            for d in range(ranks):
                launch(d, kernel, grid, ref.TPB, (xs[d], xs[d - 1], d, s, ranks, chunk))
            sync()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--n", type=int, default=1 << 16)
    args = ap.parse_args()
    ranks, n = args.ranks, args.n
    chunk = -(-n // ranks)
    data = np.random.default_rng(0).normal(size=(ranks, n)).astype(np.float32)

    plain = [data[d].copy() for d in range(ranks)]
    ref = _reference()
    ring(ref, lambda d, k, g, b, a: gpusim.launch(k, g, b, a), plain, ranks, chunk, lambda: None)   # warm-up
    plain = [data[d].copy() for d in range(ranks)]
    t0 = time.perf_counter()
    ring(ref, lambda d, k, g, b, a: gpusim.launch(k, g, b, a), plain, ranks, chunk, lambda: None)
    t_plain = time.perf_counter() - t0

    system = gpusim.System(gpusim.Topology.ring(ranks))
    xs = [system.place(d, data[d].copy()) for d in range(ranks)]
    t0 = time.perf_counter()
    ring(ref, system.launch, xs, ranks, chunk, system.synchronize)
    t_system = time.perf_counter() - t0
    assert all(np.array_equal(a, b) for a, b in zip(xs, plain)) and not system.faults
    launches = 2 * (ranks - 1) * ranks
    print(f"ring all-reduce, {ranks} ranks x {n} float32, {launches} launches")
    print(f"  plain gpusim.launch   {t_plain:7.3f} s")
    print(f"  gpusim.System         {t_system:7.3f} s   ({t_system / t_plain:.2f}x; "
          f"{system.links.total_bytes} bytes over the links)")


if __name__ == "__main__":
    main()
