# WRONG: prefix-sum expect=constraint:`a`
# Right numbers, but every thread re-reads its whole prefix from global memory (up to 32 reads of `a`).
from numba import cuda

TPB = 32


@cuda.jit
def scan_kernel(out, a, n):
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * TPB
    i = start + t
    if i < n:
        acc = 0.0
        for j in range(start, i + 1):
            acc += a[j]
        out[i] = acc
