"""Reference solution for puzzle 56 (bf16-round): float32 -> bf16 bits, round to nearest even."""

import numba
from numba import cuda

TPB = 128


@cuda.jit(device=True)
def round_bits(u):
    """bf16 bits of the float32 whose bits are ``u``: round to nearest even, every NaN to 0x7FC0."""
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return 0x7FC0
    return (u + 0x7FFF + ((u >> 16) & 1)) >> 16


@cuda.jit
def bf16_round_kernel(x, out):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < x.size:
        as_float[t] = x[i]
        cuda.threadfence_block()
        out[i] = round_bits(as_bits[t])
