# WRONG: matmul-coalesced expect=OutOfBounds
# No `t < m * n` guard: the spare threads of the last block compute a row past the end of `a`.
import numba
from numba import cuda


@cuda.jit
def matmul_naive(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    t = cuda.grid(1)
    r = t // n
    j = t % n
    acc = numba.float32(0.0)
    for q in range(k):
        acc += a[r, q] * b[q, j]
    c[r, j] = acc
