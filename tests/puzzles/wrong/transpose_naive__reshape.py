# WRONG: transpose-naive expect=mismatch
# Walks both arrays in their own memory order: element t of `a` goes to position t of `out`. That is a
# reshape, not a transpose — right only when one side is 1 (a row or a column).
from numba import cuda


@cuda.jit
def transpose_naive(a, out, rows, cols):
    t = cuda.grid(1)
    if t < rows * cols:
        out[t // rows, t % rows] = a[t // cols, t % cols]
