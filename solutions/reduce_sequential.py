"""Reference solution — puzzle 19, Reduce with sequential addressing."""
import numba
from numba import cuda

TPB = 128
BLOCKS = 4


@cuda.jit
def block_sum(a, out, n):
    x = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        x[t] = a[i]
    else:
        x[t] = 0.0
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if t < s:
            x[t] += x[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = x[0]
