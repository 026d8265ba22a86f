# WRONG: matmul-coalesced expect=constraint:`c`
# Adds every product straight into c[r, j]: right numbers, but k + 1 writes (and k reads) of `c` per thread
# where one store of a register does.
from numba import cuda


@cuda.jit
def matmul_naive(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    t = cuda.grid(1)
    if t < m * n:
        r = t // n
        j = t % n
        c[r, j] = 0.0
        for q in range(k):
            c[r, j] += a[r, q] * b[q, j]
