# WRONG: online-softmax expect=constraint:reads of `x`
# The three-pass softmax of puzzle 33: correct, but it reads every element of x three times where this
# puzzle allows two.
import math

import numba
from numba import cuda

TPB = 64


@cuda.jit
def online_softmax_kernel(x, out):
    shared = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]

    # pass 1: the row maximum
    m = -math.inf
    for c in range(t, cols, TPB):
        m = max(m, x[r, c])
    shared[t] = m
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] = max(shared[t], shared[t + stride])
        cuda.syncthreads()
        stride //= 2
    row_max = shared[0]
    cuda.syncthreads()

    # pass 2: the sum of exponentials
    acc = 0.0
    for c in range(t, cols, TPB):
        acc += math.exp(x[r, c] - row_max)
    shared[t] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] += shared[t + stride]
        cuda.syncthreads()
        stride //= 2
    total = shared[0]

    # pass 3: normalise
    for c in range(t, cols, TPB):
        out[r, c] = math.exp(x[r, c] - row_max) / total
