"""Puzzle 13 — Axis sum: out[r] = a[r, :].sum(), one block of TPB threads per row.

You may use: cuda.threadIdx.x, cuda.blockIdx.x, cuda.shared.array(TPB, numba.float32),
cuda.syncthreads(), `if`, `for`/`while`, indexing, arithmetic. No atomics.
"""
import numba
from numba import cuda

TPB = 64   # threads per block (the launch uses this block size)


@cuda.jit
def row_sum_kernel(out, a, cols):
    # FILL ME IN (about 15 lines)
    pass
