"""Reference solution for puzzle 35 (rmsnorm): row cached in registers, one shared-memory tree reduction."""

import math

import numba
from numba import cuda

TPB = 64
ITEMS = 4  # columns per thread at most: cols <= TPB * ITEMS


@cuda.jit
def rmsnorm_kernel(x, w, out, eps):
    shared = cuda.shared.array(TPB, numba.float32)
    vals = cuda.local.array(ITEMS, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]

    sq = 0.0
    for k in range(ITEMS):
        c = t + k * TPB
        if c < cols:
            v = x[r, c]
            vals[k] = v
            sq += v * v
    shared[t] = sq
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] += shared[t + stride]
        cuda.syncthreads()
        stride //= 2
    inv = 1.0 / math.sqrt(shared[0] / cols + eps)

    for k in range(ITEMS):
        c = t + k * TPB
        if c < cols:
            out[r, c] = vals[k] * inv * w[c]
