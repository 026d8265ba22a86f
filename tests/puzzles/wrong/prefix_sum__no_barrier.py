# WRONG: prefix-sum expect=DataRace
# Adds up s[0..t] without waiting for the other threads to store their elements.
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
        acc = 0.0
        for j in range(t + 1):
            acc += s[j]
        out[i] = acc
