# WRONG: matmul expect=constraint:`a`
# The textbook loop straight from global memory: k reads of `a` and of `b` per thread (up to 40), where
# tiling needs 3 (and no shared memory at all).
from numba import cuda

TILE = 16


@cuda.jit
def matmul_kernel(out, a, b, m, k, n):
    c = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    r = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    if r < m and c < n:
        acc = 0.0
        for j in range(k):
            acc += a[r, j] * b[j, c]
        out[r, c] = acc
