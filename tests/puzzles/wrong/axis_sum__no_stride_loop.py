# WRONG: axis-sum expect=mismatch
# Each thread takes only column t: rows wider than the block lose every column past TPB.
import numba
from numba import cuda

TPB = 64


@cuda.jit
def row_sum_kernel(out, a, cols):
    s = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    if t < cols:
        s[t] = a[r, t]
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
        out[r] = s[0]
