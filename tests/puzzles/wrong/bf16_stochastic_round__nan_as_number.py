# WRONG: bf16-stochastic-round expect=mismatch
# No NaN case: infinity minus infinity is a NaN, and adding random bits to its pattern carries it into a
# different NaN or, for 0x7FFFFFFF (what a GPU produces), past the sign bit into minus zero.
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
            bits = (numba.int64(as_bits[t]) + numba.int64(rand[s, i])) >> 16
        w[i] = bits
