"""Reference solution — puzzle 13, Axis sum (block-stride loop, then a sequential-addressing tree)."""
import numba
from numba import cuda

TPB = 64


@cuda.jit
def row_sum_kernel(out, a, cols):
    s = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    acc = 0.0
    for c in range(t, cols, TPB):
        acc += a[r, c]
    s[t] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[r] = s[0]
