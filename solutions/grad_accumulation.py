"""Reference solution for puzzle 59 (grad-accumulation): bf16 micro-batch gradients into fp32, token-weighted."""

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
        weight = numba.float32(tokens[k] / total)
        as_bits[t] = numba.uint32(grad[k, i]) << 16
        cuda.threadfence_block()
        g = as_float[t]
        if k == 0:
            acc[i] = weight * g
        else:
            acc[i] += weight * g
