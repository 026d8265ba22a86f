# WRONG: prefix-sum expect=mismatch
# An exclusive scan (sum of the elements *before* i): off by one element everywhere.
import numba
from numba import cuda

TPB = 32


@cuda.jit
def scan_kernel(out, a, n):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        s[t] = a[i]
    cuda.syncthreads()
    if i < n:
        acc = 0.0
        for j in range(t):
            acc += s[j]
        out[i] = acc
