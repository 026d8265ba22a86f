# WRONG: bf16-stochastic-round expect=mismatch
# Rounds to nearest even (puzzle 56) instead of stochastically: with updates below half a bf16 step, the
# weights never move, however many steps run.
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
        bits = numba.int64(w[i])
        for s in range(updates.shape[0]):
            as_bits[t] = bits << 16
            cuda.threadfence_block()
            as_float[t] = as_float[t] + updates[s, i]
            cuda.threadfence_block()
            u = numba.int64(as_bits[t])
            if (u & 0x7FFFFFFF) > 0x7F800000:
                bits = 0x7FC0
            else:
                bits = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
        w[i] = bits
