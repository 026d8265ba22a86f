# WRONG: fp16-accumulate expect=mismatch
# Multiplies and accumulates in float16, and reduces in a float16 shared array: the "overflow" rows
# pass 65504 and become inf, and every other row loses digits.
import numba
import numpy as np
from numba import cuda

TPB = 128


@cuda.jit
def gemv_fp16_kernel(W, x, y):
    shared = cuda.shared.array(TPB, np.float16)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = W.shape[1]
    acc = np.float16(0.0)
    for c in range(t, cols, TPB):
        acc += W[r, c] * x[c]
    shared[t] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] += shared[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        y[r] = numba.float32(shared[0])
