"""Puzzle 57 — bf16: stochastic rounding.

For each step s: w[i] = round_stochastic(float32(w[i]) + updates[s, i], rand[s, i]), the weight kept as
bf16 bits (uint16) between steps. Round: (u + r) >> 16 on the float32 bits u, every NaN -> 0x7FC0.
Widen bf16 -> float32 through the aliased shared arrays: as_bits[t] = bits << 16, then read as_float[t]
(cuda.threadfence_block() between a store through one view and a read through the other).
One read and one write of w per thread; updates and rand: one read each per step.
"""
import numba
from numba import cuda

TPB = 128  # threads per block (the launch uses this, with TPB * 4 bytes of dynamic shared memory)


@cuda.jit
def sr_update_kernel(w, updates, rand):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    # FILL ME IN (about 12 lines)
    pass
