# WRONG: bias-gelu expect=mismatch
# Indexes the bias by row instead of by column: every column gets the same shift. (With more rows than
# columns, as in the 37x8 case, it would also read past the end of `bias`.)
import math

from numba import cuda

SQRT_2_OVER_PI = 0.7978845608028654


@cuda.jit
def bias_gelu_kernel(x, bias, out):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if r < x.shape[0] and c < x.shape[1]:
        z = x[r, c] + bias[r]
        inner = SQRT_2_OVER_PI * (z + 0.044715 * z * z * z)
        out[r, c] = 0.5 * z * (1.0 + math.tanh(inner))
