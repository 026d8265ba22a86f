# WRONG: grad-accumulation expect=mismatch
# Weighs each micro-batch by its token count but never divides by the batch total: the result is the
# gradient of the summed loss, sum(tokens) times too large.

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
        weight = numba.float32(tokens[k])
        as_bits[t] = numba.uint32(grad[k, i]) << 16
        cuda.threadfence_block()
        g = as_float[t]
        if k == 0:
            acc[i] = weight * g
        else:
            acc[i] += weight * g
