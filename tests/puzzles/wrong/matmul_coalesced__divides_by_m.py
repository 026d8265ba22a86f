# WRONG: matmul-coalesced expect=OutOfBounds
# Splits t by the number of rows instead of the number of columns: r = t // m walks past the last row.
import numba
from numba import cuda


@cuda.jit
def matmul_naive(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    t = cuda.grid(1)
    if t < m * n:
        r = t // m
        j = t % m
        acc = numba.float32(0.0)
        for q in range(k):
            acc += a[r, q] * b[q, j]
        c[r, j] = acc
