"""Puzzle 16 — Naive transpose: out[j, i] = a[i, j]; a is (rows, cols), out is (cols, rows).

One thread per element on a 1D launch (blocks of TPB threads); you choose which element thread t copies.
You may use: cuda.grid(1), `if`, integer `//` and `%`. Read `a` once and write `out` once per thread.
"""
from numba import cuda

TPB = 256  # threads per block (the launch uses this)


@cuda.jit
def transpose_naive(a, out, rows, cols):
    # FILL ME IN (about 5 lines)
    pass
