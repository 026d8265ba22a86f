"""Puzzle 29 — Blelloch scan.

Each block of TPB threads computes the exclusive scan of its tile of TILE = 2 * TPB elements:
out[i] = a[tile start] + ... + a[i - 1], and 0 for the first element of the tile.
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array (at most 640 bytes per block),
cuda.syncthreads(), @cuda.jit(device=True) helpers. Read `a` and write `out` at most twice
per thread; no atomics.
"""

import numba
from numba import cuda

TPB = 64          # threads per block (the launch uses this)
TILE = 2 * TPB    # elements per block


@cuda.jit
def blelloch_kernel(a, out, n):
    s = cuda.shared.array(TILE, numba.int32)  # for ★★★, make room for padding: TILE + TILE // 32
    t = cuda.threadIdx.x
    # FILL ME IN (about 35 lines: load two elements, up-sweep, clear the root, down-sweep, store two)
    pass
