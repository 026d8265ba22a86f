"""Puzzle 12 — Prefix sum: each block scans its own segment of TPB elements (inclusive).

You may use: cuda.threadIdx.x, cuda.blockIdx.x, cuda.shared.array(TPB, numba.float32),
cuda.syncthreads(), `if`, `for`/`while`, indexing, arithmetic. No atomics.
"""
import numba
from numba import cuda

TPB = 32   # threads per block = elements per segment (the launch uses this block size)


@cuda.jit
def scan_kernel(out, a, n):
    # FILL ME IN (about 12 lines)
    pass
