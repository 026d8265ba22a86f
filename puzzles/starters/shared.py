"""Puzzle 8 — Shared memory: reverse each block's chunk of TPB elements, through shared memory.

You may use: cuda.threadIdx.x, cuda.blockIdx.x, cuda.shared.array(TPB, numba.float32),
cuda.syncthreads(), `if`, min(), indexing, arithmetic.
"""
import numba
from numba import cuda

TPB = 8   # threads per block = elements per chunk (the launch uses this block size)


@cuda.jit
def reverse_kernel(out, a, n):
    # FILL ME IN (about 9 lines)
    pass
