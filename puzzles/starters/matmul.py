"""Puzzle 14 — Matmul: out = a @ b with a (m x k), b (k x n), TILE x TILE blocks and shared tiles.

You may use: cuda.threadIdx / blockIdx .x .y, cuda.shared.array((TILE, TILE), numba.float32),
cuda.syncthreads(), `if`, `for ... in range(...)`, indexing, arithmetic.
"""
import numba
from numba import cuda

TILE = 16   # the block is TILE x TILE threads (x = column, y = row)


@cuda.jit
def matmul_kernel(out, a, b, m, k, n):
    # FILL ME IN (about 22 lines)
    pass
