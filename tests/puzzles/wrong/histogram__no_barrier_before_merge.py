# WRONG: histogram expect=DataRace
# Merges without waiting for the block to finish counting: thread t may read sh[t] while another warp
# is still adding into it.
import numba
from numba import cuda

BINS = 100
TPB = 128


@cuda.jit
def histogram(values, hist, n):
    sh = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        sh[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    while i < n:
        cuda.atomic.add(sh, values[i], 1)
        i += cuda.gridsize(1)
    if t < BINS and sh[t] > 0:
        cuda.atomic.add(hist, t, sh[t])
