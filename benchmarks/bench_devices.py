"""What several simulated devices cost: a ring all-reduce through ``gpusim.System`` (link counting and the
race checker between devices) beside the same launches through plain ``gpusim.launch``, from one run.

    python -m benchmarks.bench_devices [--ranks 8] [--n 65536]

Prints seconds for each and the ratio (System / plain). Both run with gpusim's instrumentation on.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import cuda

import gpusim

TPB = 128


@cuda.jit
def reduce_step(x, left, rank, step, ranks, chunk):
    j = cuda.grid(1)
    c = (rank - 1 - step) % ranks
    i = c * chunk + j
    if j < chunk and i < x.size:
        x[i] += left[i]


@cuda.jit
def gather_step(x, left, rank, step, ranks, chunk):
    j = cuda.grid(1)
    c = (rank - step) % ranks
    i = c * chunk + j
    if j < chunk and i < x.size:
        x[i] = left[i]


def ring(launch, xs, ranks, chunk, sync) -> None:
    grid = -(-chunk // TPB)
    for kernel, rounds in ((reduce_step, ranks - 1), (gather_step, ranks - 1)):
        for s in range(rounds):
            for d in range(ranks):
                launch(d, kernel, grid, TPB, (xs[d], xs[d - 1], d, s, ranks, chunk))
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
    ring(lambda d, k, g, b, a: gpusim.launch(k, g, b, a), plain, ranks, chunk, lambda: None)   # warm-up
    plain = [data[d].copy() for d in range(ranks)]
    t0 = time.perf_counter()
    ring(lambda d, k, g, b, a: gpusim.launch(k, g, b, a), plain, ranks, chunk, lambda: None)
    t_plain = time.perf_counter() - t0

    system = gpusim.System(gpusim.Topology.ring(ranks))
    xs = [system.place(d, data[d].copy()) for d in range(ranks)]
    t0 = time.perf_counter()
    ring(system.launch, xs, ranks, chunk, system.synchronize)
    t_system = time.perf_counter() - t0
    assert all(np.array_equal(a, b) for a, b in zip(xs, plain)) and not system.faults
    launches = 2 * (ranks - 1) * ranks
    print(f"ring all-reduce, {ranks} ranks x {n} float32, {launches} launches")
    print(f"  plain gpusim.launch   {t_plain:7.3f} s")
    print(f"  gpusim.System         {t_system:7.3f} s   ({t_system / t_plain:.2f}x; "
          f"{system.links.total_bytes} bytes over the links)")


if __name__ == "__main__":
    main()
