# WRONG: shared expect=UninitializedRead
# Reverses as if every chunk were full (s[TPB-1-t]): in the short last chunk that reads slots no thread
# loaded.
import numba
from numba import cuda

TPB = 8


@cuda.jit
def reverse_kernel(out, a, n):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        s[t] = a[i]
    cuda.syncthreads()
    if i < n:
        out[i] = s[TPB - 1 - t]
