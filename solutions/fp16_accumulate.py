"""Reference solution for puzzle 39 (fp16-accumulate): fp16 loads, fp32 products and sums, one block per row."""

import numba
from numba import cuda

TPB = 128


@cuda.jit
def gemv_fp16_kernel(W, x, y):
    shared = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = W.shape[1]

    acc = numba.float32(0.0)
    for c in range(t, cols, TPB):
        acc += numba.float32(W[r, c]) * numba.float32(x[c])
    shared[t] = acc
    cuda.syncthreads()

    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] += shared[t + stride]
        cuda.syncthreads()
        stride //= 2

    if t == 0:
        y[r] = shared[0]
