"""Puzzle 1 — Map: out[i] = a[i] + 10, one thread per element, one block.

You may use: cuda.threadIdx.x, array indexing, arithmetic.
"""
from numba import cuda


@cuda.jit
def map_kernel(out, a):
    # FILL ME IN (about 2 lines)
    pass
