# WRONG: bias-gelu expect=OutOfBounds
# Guards the column but not the row: the grid rounds the rows up to a multiple of 4, and the threads of
# the extra rows write past the end of `out`.
import math

from numba import cuda

SQRT_2_OVER_PI = 0.7978845608028654


@cuda.jit
def bias_gelu_kernel(x, bias, out):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if c < x.shape[1]:
        z = x[r, c] + bias[c]
        inner = SQRT_2_OVER_PI * (z + 0.044715 * z * z * z)
        out[r, c] = 0.5 * z * (1.0 + math.tanh(inner))
