# WRONG: activation-recompute expect=OutOfBounds
# Indexes the per-column vectors by row (w1[r] instead of w1[r]): with more rows than columns the last
# rows read past the end of the vectors.

import math

from numba import cuda

K = 0.7978845608028654   # sqrt(2 / pi)
A = 0.044715


@cuda.jit(device=True)
def gelu_parts(u):
    """gelu(u) and its derivative, from one tanh."""
    t = math.tanh(K * (u + A * u * u * u))
    value = 0.5 * u * (1.0 + t)
    slope = 0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * K * (1.0 + 3.0 * A * u * u)
    return value, slope


@cuda.jit
def forward_kernel(x, w1, b1, w2, b2, y, h_saved):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if r < x.shape[0] and c < x.shape[1]:
        h, _ = gelu_parts(x[r, c] * w1[r] + b1[r])
        out, _ = gelu_parts(h * w2[r] + b2[r])
        y[r, c] = out


@cuda.jit
def backward_kernel(x, w1, b1, w2, b2, h_saved, dy, dx):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if r < x.shape[0] and c < x.shape[1]:
        scale1 = w1[r]
        scale2 = w2[r]
        h, slope1 = gelu_parts(x[r, c] * scale1 + b1[r])
        _, slope2 = gelu_parts(h * scale2 + b2[r])
        dx[r, c] = dy[r, c] * slope2 * scale2 * slope1 * scale1
