"""Puzzle 61 — Gradient-norm clipping.

Launch 1 sumsq_kernel (grid ceil(n/TPB)): partials[b] = sum of grads[i]^2 over block b's elements.
Launch 2 norm_kernel (one block): norm[0] = sqrt(sum of all partials),
                                  coef[0] = min(max_norm / (norm + 1e-6), 1).
Launch 3 clip_kernel (grid ceil(n/TPB)): grads[i] *= coef[0].
Allowed: cuda.threadIdx / blockIdx / grid, cuda.shared.array, cuda.syncthreads(), math.sqrt. No atomics.
"""
import math

import numba
from numba import cuda

TPB = 128  # threads per block in every launch


@cuda.jit
def sumsq_kernel(grads, partials):
    buf = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    # FILL ME IN (about 12 lines)
    pass


@cuda.jit
def norm_kernel(partials, norm, max_norm, coef):
    buf = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    # FILL ME IN (about 14 lines)
    pass


@cuda.jit
def clip_kernel(grads, coef):
    i = cuda.grid(1)
    # FILL ME IN (about 2 lines)
    pass
