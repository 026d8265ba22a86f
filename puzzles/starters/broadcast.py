"""Puzzle 5 — Broadcast: out[r, c] = a[r] + b[c]; out is rows x cols, one 2-D block covers it.

You may use: cuda.threadIdx.x / .y, `if`, array indexing, arithmetic.
"""
from numba import cuda


@cuda.jit
def broadcast_kernel(out, a, b, rows, cols):
    # FILL ME IN (about 4 lines)
    pass
