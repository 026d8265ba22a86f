# WRONG: layernorm expect=mismatch:expected
# eps added after the square root: 1 / (sqrt(var) + eps). Only a row whose variance is as small as eps
# shows it (the old cases had none).

import math

import numba
from numba import cuda

TPB = 64
ITEMS = 4  # columns per thread at most: cols <= TPB * ITEMS


@cuda.jit
def layernorm_kernel(x, w, b, out, eps):
    shared = cuda.shared.array(TPB, numba.float32)
    vals = cuda.local.array(ITEMS, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]

    # the mean
    acc = 0.0
    for k in range(ITEMS):
        c = t + k * TPB
        if c < cols:
            v = x[r, c]
            vals[k] = v
            acc += v
    shared[t] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] += shared[t + stride]
        cuda.syncthreads()
        stride //= 2
    mean = shared[0] / cols
    cuda.syncthreads()

    # the variance, from values already centred
    acc = 0.0
    for k in range(ITEMS):
        c = t + k * TPB
        if c < cols:
            d = vals[k] - mean
            acc += d * d
    shared[t] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] += shared[t + stride]
        cuda.syncthreads()
        stride //= 2
    inv = 1.0 / (math.sqrt(shared[0] / cols) + eps)

    for k in range(ITEMS):
        c = t + k * TPB
        if c < cols:
            out[r, c] = (vals[k] - mean) * inv * w[c] + b[c]
