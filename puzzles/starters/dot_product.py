"""Puzzle 10 — Dot product: out[j] = sum of a[i] * b[i] over block j's segment of TPB elements.

You may use: cuda.threadIdx.x, cuda.blockIdx.x, cuda.shared.array(TPB, numba.float32),
cuda.syncthreads(), `if`, `while`, indexing, arithmetic. No atomics.
"""
import numba
from numba import cuda

TPB = 64   # threads per block = elements per block (the launch uses this block size)


@cuda.jit
def dot_kernel(out, a, b, n):
    # FILL ME IN (about 15 lines)
    pass
