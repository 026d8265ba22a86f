"""Puzzle 56 — bf16: round to nearest even.

out[i] = the bf16 bit pattern (uint16) nearest to the float32 x[i], ties to even, every NaN -> 0x7FC0.
The two dynamic shared arrays alias: store a float into `as_float[t]`, call cuda.threadfence_block(), and
`as_bits[t]` holds its 32 bits. Allowed: cuda.threadIdx / blockIdx, the shared arrays below, integer
operators (& | >> << + -), cuda.threadfence_block(). One read of x and one write of out per thread.
"""
import numba
from numba import cuda

TPB = 128  # threads per block (the launch uses this, with TPB * 4 bytes of dynamic shared memory)


@cuda.jit(device=True)
def round_bits(u):
    """bf16 bits of the float32 whose bits are `u`."""
    # FILL ME IN (about 3 lines)
    return 0


@cuda.jit
def bf16_round_kernel(x, out):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    # FILL ME IN (about 4 lines)
    pass
