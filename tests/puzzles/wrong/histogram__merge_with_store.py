# WRONG: histogram expect=DataRace
# Merges with a plain store: every block writes its own count into hist[b], so the blocks overwrite
# each other (a write-after-write race between blocks) and only one block's counts survive.
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
    cuda.syncthreads()
    if t < BINS:
        hist[t] = sh[t]
