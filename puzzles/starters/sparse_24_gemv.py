"""Puzzle 42 — 2:4 sparse GEMV.

y[r] = sum over kept values j of values[r, j] * x[4 * (j // 2) + pos], where pos (0..3) is bits 0-1 of
meta[r, j // 2] for even j and bits 2-3 for odd j.
Block (TPB_X, ROWS): threadIdx.y picks the row (blockIdx.x * ROWS + threadIdx.y), threadIdx.x walks its
kept values. Stage x in shared memory first (all threads help), then gather from there.
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array, cuda.syncthreads(), bit operations, numba.float32.
Write y[row] once, for rows that exist.
"""

import numba
from numba import cuda

TPB_X = 32   # threads per row
ROWS = 4     # rows per block (the launch uses blocks of (TPB_X, ROWS))
K_MAX = 128  # the longest x among the cases


@cuda.jit
def sparse24_gemv(values, meta, x, y):
    xs = cuda.shared.array(K_MAX, numba.float32)
    partial = cuda.shared.array((ROWS, TPB_X), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.x * ROWS + ty
    # FILL ME IN (about 20 lines)
    pass
