"""Puzzle 55 — Split-K: c = a @ b in two launches.

1. matmul_partial(a, b, part, slice_k): grid (ceil(n / TILE), ceil(m / TILE), S), blocks (TILE, TILE).
   Block (x, y, z) computes part[z] = a[:, lo:hi] @ b[lo:hi, :] for its tile, with lo = z * slice_k and
   hi = min(k, lo + slice_k) (slice_k is a multiple of BK; a slice may be empty: then part[z] is 0).
   Puzzle 49's thin tiles work here unchanged.
2. sum_slices(part, c): blocks of TPB threads, ceil(m * n / TPB) blocks; c = part[0] + part[1] + ...,
   added in that order.
You may use: cuda.threadIdx / blockIdx (.z too), cuda.grid(1), cuda.shared.array (at most 4096 bytes),
cuda.syncthreads(), `if`, `for ... in range(...)`, min, numba.float32. No atomics.
★★ needs coalesced accesses; ★★★ 7 FLOPs per byte loaded over both launches and no bank conflicts.
"""
import numba
from numba import cuda

TILE = 32   # launch 1: TILE x TILE threads, one output each
BK = 16     # depth of a k-slice of the tiles
TPB = 256   # launch 2: threads per block


@cuda.jit
def matmul_partial(a, b, part, slice_k):
    sa = cuda.shared.array((TILE, BK), numba.float32)
    sb = cuda.shared.array((BK, TILE), numba.float32)
    m, k = a.shape
    n = b.shape[1]
    # FILL ME IN (about 30 lines)
    pass


@cuda.jit
def sum_slices(part, c):
    s, m, n = part.shape
    # FILL ME IN (about 8 lines)
    pass
