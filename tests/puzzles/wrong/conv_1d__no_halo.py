# WRONG: conv-1d expect=mismatch
# Loads only the block's own TPB elements and treats everything past the tile as 0: the last k-1 outputs
# of every block but the last lose the terms that lie in the next block's range.
import numba
from numba import cuda

TPB = 16
MAX_K = 4


@cuda.jit
def conv_kernel(out, a, w, n, k):
    tile = cuda.shared.array(TPB, numba.float32)
    ws = cuda.shared.array(MAX_K, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        tile[t] = a[i]
    else:
        tile[t] = 0.0
    if t < k:
        ws[t] = w[t]
    cuda.syncthreads()
    if i < n:
        acc = 0.0
        for j in range(k):
            if t + j < TPB:
                acc += tile[t + j] * ws[j]
        out[i] = acc
