"""Reference solution for puzzle 57 (bf16-stochastic-round): bf16 weights, updated and rounded stochastically."""

import numba
from numba import cuda

TPB = 128


@cuda.jit(device=True)
def round_stochastic_bits(u, r):
    """bf16 bits of the float32 whose bits are ``u``, rounded up when ``r`` (16 random bits) carries."""
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return 0x7FC0
    return (u + r) >> 16


@cuda.jit
def sr_update_kernel(w, updates, rand):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < w.size:
        bits = numba.int64(w[i])
        for s in range(updates.shape[0]):
            as_bits[t] = bits << 16
            cuda.threadfence_block()
            value = as_float[t] + updates[s, i]
            as_float[t] = value
            cuda.threadfence_block()
            bits = round_stochastic_bits(numba.int64(as_bits[t]), numba.int64(rand[s, i]))
        w[i] = bits
