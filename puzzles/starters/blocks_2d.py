"""Puzzle 7 — Blocks 2-D: out[r, c] = a[r, c] + 10, a 2-D grid of 2-D blocks over a rows x cols matrix.

You may use: cuda.threadIdx / blockIdx / blockDim .x and .y (or cuda.grid(2)), `if`, indexing.
"""
from numba import cuda


@cuda.jit
def blocks_2d_kernel(out, a, rows, cols):
    # FILL ME IN (about 4 lines)
    pass
