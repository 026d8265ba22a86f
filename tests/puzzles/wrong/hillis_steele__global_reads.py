# WRONG: hillis-steele expect=constraint:`a`
# Correct sums, but each thread re-reads its whole tile prefix from global memory: up to 64 reads of
# `a` per thread where the puzzle allows one (and no shared memory at all).
from numba import cuda

TPB = 64


@cuda.jit
def hillis_steele_kernel(a, out, n):
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * TPB
    i = start + t
    if i < n:
        acc = 0
        for j in range(start, i + 1):
            acc += a[j]
        out[i] = acc
