"""Reference solution — puzzle 10, Dot product (per-block partial sums, sequential-addressing tree)."""
import numba
from numba import cuda

TPB = 64


@cuda.jit
def dot_kernel(out, a, b, n):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        s[t] = a[i] * b[i]
    else:
        s[t] = 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]
