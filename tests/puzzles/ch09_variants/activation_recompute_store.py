"""Puzzle 58, the store strategy: correct (★), but it writes h in the forward pass and reads it back."""

import math

from numba import cuda

K = 0.7978845608028654
A = 0.044715


@cuda.jit(device=True)
def gelu_parts(u):
    t = math.tanh(K * (u + A * u * u * u))
    value = 0.5 * u * (1.0 + t)
    slope = 0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * K * (1.0 + 3.0 * A * u * u)
    return value, slope


@cuda.jit
def forward_kernel(x, w1, b1, w2, b2, y, h_saved):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if r < x.shape[0] and c < x.shape[1]:
        h, _ = gelu_parts(x[r, c] * w1[c] + b1[c])
        h_saved[r, c] = h
        out, _ = gelu_parts(h * w2[c] + b2[c])
        y[r, c] = out


@cuda.jit
def backward_kernel(x, w1, b1, w2, b2, h_saved, dy, dx):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if r < x.shape[0] and c < x.shape[1]:
        scale1 = w1[c]
        scale2 = w2[c]
        u1 = x[r, c] * scale1 + b1[c]
        t1 = math.tanh(K * (u1 + A * u1 * u1 * u1))
        slope1 = 0.5 * (1.0 + t1) + 0.5 * u1 * (1.0 - t1 * t1) * K * (1.0 + 3.0 * A * u1 * u1)
        _, slope2 = gelu_parts(h_saved[r, c] * scale2 + b2[c])
        dx[r, c] = dy[r, c] * slope2 * scale2 * slope1 * scale1
