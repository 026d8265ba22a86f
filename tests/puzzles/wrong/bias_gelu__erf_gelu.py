# WRONG: bias-gelu expect=mismatch
# The exact GELU, 0.5 * z * (1 + erf(z / sqrt(2))), where the puzzle asks for the tanh approximation:
# the two differ by up to about 5e-4, far outside the tolerance.
import math

from numba import cuda


@cuda.jit
def bias_gelu_kernel(x, bias, out):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if r < x.shape[0] and c < x.shape[1]:
        z = x[r, c] + bias[c]
        out[r, c] = 0.5 * z * (1.0 + math.erf(z / math.sqrt(2.0)))
