# WRONG: grad-accumulation expect=mismatch
# Averages the micro-batch gradients (weight 1/K each): the mean of per-micro-batch means, which weighs a
# micro-batch of 3 tokens as much as one of 4000. Right only when every micro-batch has the same count.

import numba
from numba import cuda

TPB = 128


@cuda.jit
def accumulate_kernel(acc, grad, tokens, k):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < acc.size:
        total = 0
        for j in range(tokens.size):
            total += tokens[j]
        weight = numba.float32(1.0 / tokens.size)
        as_bits[t] = numba.uint32(grad[k, i]) << 16
        cuda.threadfence_block()
        g = as_float[t]
        if k == 0:
            acc[i] = weight * g
        else:
            acc[i] += weight * g
