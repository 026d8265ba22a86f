# WRONG: column-parallel expect=mismatch
# Writes y[r, c] instead of y[row0 + r, c]: every launch overwrites the first R rows of the output.

import math

import numba
from numba import cuda

ROWS = 4
K_MAX = 128
SQRT_2_OVER_PI = 0.7978845608028654


@cuda.jit
def column_parallel(x_part, a, bias, y, row0):
    xs = cuda.shared.array((ROWS, K_MAX), numba.float32)
    c = cuda.threadIdx.x
    t = cuda.threadIdx.y
    r = cuda.blockIdx.x * ROWS + t
    rows = x_part.shape[0]
    width = x_part.shape[1]
    if r < rows:
        for k in range(c, width, cuda.blockDim.x):
            xs[t, k] = x_part[r, k]
    cuda.syncthreads()
    if r < rows:
        z = bias[c]
        for k in range(width):
            z += xs[t, k] * a[k, c]
        y[r, c] = 0.5 * z * (1.0 + math.tanh(SQRT_2_OVER_PI * (z + 0.044715 * z * z * z)))
