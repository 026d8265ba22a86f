"""Reference solution — puzzle 12, Prefix sum (each thread adds its prefix of the shared segment)."""
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
        for j in range(t + 1):
            acc += s[j]
        out[i] = acc
