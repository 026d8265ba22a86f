"""Reference solution — puzzle 9, Pooling."""
import numba
from numba import cuda

TPB = 16


@cuda.jit
def pool_kernel(out, a, n):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    if t < n:
        s[t] = a[t]
    cuda.syncthreads()
    if t < n:
        total = s[t]
        if t >= 1:
            total += s[t - 1]
        if t >= 2:
            total += s[t - 2]
        out[t] = total
