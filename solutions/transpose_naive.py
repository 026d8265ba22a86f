"""Reference solution — puzzle 16, Naive transpose.

Thread t follows `out` in memory order, so the stores are coalesced and the loads walk down a column of
`a` (the cheaper side to leave strided).
"""
from numba import cuda

TPB = 256


@cuda.jit
def transpose_naive(a, out, rows, cols):
    t = cuda.grid(1)
    if t < rows * cols:
        j = t // rows      # row of out = column of a
        i = t % rows       # column of out = row of a
        out[j, i] = a[i, j]
