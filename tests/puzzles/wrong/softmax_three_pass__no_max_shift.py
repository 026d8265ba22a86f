# WRONG: softmax-three-pass expect=mismatch
# Skips the max: exp(x) of logits near 100 overflows float32 to inf, and inf / inf is nan.
import math

import numba
from numba import cuda

TPB = 64


@cuda.jit
def softmax_kernel(x, out):
    shared = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]

    row_max = 0.0  # "the max only matters for numerics; the formula is the same without it"

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
