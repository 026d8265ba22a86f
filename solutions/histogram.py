"""Reference solution — puzzle 25, Histogram: a private shared-memory histogram per block, merged once."""
import numba
from numba import cuda

BINS = 100
BLOCKS = 4
TPB = 128


@cuda.jit
def histogram(values, hist, n):
    sh = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    b = t
    while b < BINS:
        sh[b] = 0
        b += TPB
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        cuda.atomic.add(sh, values[i], 1)
        i += stride
    cuda.syncthreads()
    b = t
    while b < BINS:
        if sh[b] > 0:
            cuda.atomic.add(hist, b, sh[b])
        b += TPB
