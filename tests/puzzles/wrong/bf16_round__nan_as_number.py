# WRONG: bf16-round expect=mismatch
# Rounds NaNs like numbers: 0x7F800001 becomes 0x7F80 (infinity) and 0x7FFFFFFF carries past the sign
# into 0x8000 (minus zero), so a NaN in the weights silently turns into a number.
import numba
from numba import cuda

TPB = 128


@cuda.jit
def bf16_round_kernel(x, out):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < x.size:
        as_float[t] = x[i]
        cuda.threadfence_block()
        u = as_bits[t]
        out[i] = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
