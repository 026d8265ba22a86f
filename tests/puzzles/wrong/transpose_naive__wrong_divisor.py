# WRONG: transpose-naive expect=OutOfBounds
# Splits t by `rows` but then uses the parts as (row, column) of `a`: on a 2x3 matrix t = 4 gives
# i = 2, one row past the end of `a`.
from numba import cuda


@cuda.jit
def transpose_naive(a, out, rows, cols):
    t = cuda.grid(1)
    if t < rows * cols:
        i = t // rows
        j = t % rows
        out[j, i] = a[i, j]
