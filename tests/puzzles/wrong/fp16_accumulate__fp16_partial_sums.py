# WRONG: fp16-accumulate expect=mismatch
# The block reduction is float32, but each thread's running sum over its 16 columns is kept in float16:
# a subtler version of the same mistake, off by a few parts in 10,000: still tens of times the tolerance.
import numba
import numpy as np
from numba import cuda

TPB = 128


@cuda.jit
def gemv_fp16_kernel(W, x, y):
    shared = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = W.shape[1]
    acc = np.float16(0.0)
    for c in range(t, cols, TPB):
        acc += W[r, c] * x[c]
    shared[t] = numba.float32(acc)
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] += shared[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        y[r] = shared[0]
