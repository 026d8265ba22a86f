# WRONG: grad-norm-clip expect=DataRace
# The tree sum has no barrier between its levels: a thread adds buf[t + stride] before the thread that
# owns it has finished adding into it.

import math

import numba
from numba import cuda

TPB = 128


@cuda.jit(device=True)
def block_sum(buf, t):
    """Tree-sum buf[0..TPB) in place; every thread of the block must call it. The sum ends in buf[0]."""
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            buf[t] += buf[t + stride]
        stride //= 2


@cuda.jit
def sumsq_kernel(grads, partials):
    buf = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    g = numba.float32(0.0)
    if i < grads.size:
        g = grads[i]
    buf[t] = g * g
    cuda.syncthreads()
    block_sum(buf, t)
    if t == 0:
        partials[cuda.blockIdx.x] = buf[0]


@cuda.jit
def norm_kernel(partials, norm, max_norm, coef):
    buf = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    acc = numba.float32(0.0)
    for b in range(t, partials.size, TPB):
        acc += partials[b]
    buf[t] = acc
    cuda.syncthreads()
    block_sum(buf, t)
    if t == 0:
        total = math.sqrt(buf[0])
        norm[0] = total
        coef[0] = min(max_norm / (total + numba.float32(1e-6)), numba.float32(1.0))


@cuda.jit
def clip_kernel(grads, coef):
    i = cuda.grid(1)
    if i < grads.size:
        grads[i] *= coef[0]
