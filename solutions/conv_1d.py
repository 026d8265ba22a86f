"""Reference solution — puzzle 11, 1-D convolution (shared tile + halo, shared weights)."""
import numba
from numba import cuda

TPB = 16
MAX_K = 4
TILE_LEN = TPB + MAX_K - 1   # shared.array shapes must be compile-time constants: compute them here


@cuda.jit
def conv_kernel(out, a, w, n, k):
    tile = cuda.shared.array(TILE_LEN, numba.float32)
    ws = cuda.shared.array(MAX_K, numba.float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * TPB
    i = start + t
    if i < n:
        tile[t] = a[i]
    else:
        tile[t] = 0.0
    if t < MAX_K - 1:
        h = start + TPB + t
        if h < n:
            tile[TPB + t] = a[h]
        else:
            tile[TPB + t] = 0.0
    if t < k:
        ws[t] = w[t]
    cuda.syncthreads()
    if i < n:
        acc = 0.0
        for j in range(k):
            acc += tile[t + j] * ws[j]
        out[i] = acc
