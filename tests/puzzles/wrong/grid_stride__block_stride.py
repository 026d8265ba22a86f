# WRONG: grid-stride expect=DataRace
# Strides by the block size instead of the grid size: block 1 starts at element 64 and walks the same
# elements block 0 reaches one step later, so several blocks write every element (same value, but a
# write-after-write race between blocks, and each thread does up to 4x the work).
from numba import cuda


@cuda.jit
def saxpy(alpha, x, y, out, n):
    i = cuda.grid(1)
    while i < n:
        out[i] = alpha * x[i] + y[i]
        i += cuda.blockDim.x
