"""Puzzle 59 — Gradient accumulation.

Launch k (k = 0, 1, ..., K-1, in order): acc[i] (+)= tokens[k] / sum(tokens) * float32(grad[k, i]).
The first launch (k == 0) writes acc, later ones add to it; acc starts as NaN. grad holds bf16 bits:
widen them through the aliased shared arrays (as_bits[t] = bits << 16, cuda.threadfence_block(), read
as_float[t]). Per launch: one read of grad, at most one read and one write of acc per thread.
"""
import numba
from numba import cuda

TPB = 128  # threads per block (the launch uses this, with TPB * 4 bytes of dynamic shared memory)


@cuda.jit
def accumulate_kernel(acc, grad, tokens, k):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    # FILL ME IN (about 12 lines)
    pass
