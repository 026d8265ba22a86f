# WRONG: bf16-stochastic-round expect=mismatch
# Keeps a float32 copy of the weight in a register across the steps and rounds once, at the end. That is
# a master weight (puzzle 62), not what a bf16-only optimizer can do: its weights are stored as bf16 between
# steps, so each step starts from the rounded value.
import numba
from numba import cuda

TPB = 128


@cuda.jit
def sr_update_kernel(w, updates, rand):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < w.size:
        as_bits[t] = numba.int64(w[i]) << 16
        cuda.threadfence_block()
        value = as_float[t]
        steps = updates.shape[0]
        for s in range(steps):
            value += updates[s, i]
        as_float[t] = value
        cuda.threadfence_block()
        u = numba.int64(as_bits[t])
        if (u & 0x7FFFFFFF) > 0x7F800000:
            w[i] = 0x7FC0
        else:
            w[i] = (u + numba.int64(rand[steps - 1, i])) >> 16
