# WRONG: blocks-2d expect=OutOfBounds
# The grid is rounded up to whole blocks, so the last blocks have threads past the matrix's edge; without
# the guard they read and write outside it.
from numba import cuda


@cuda.jit
def blocks_2d_kernel(out, a, rows, cols):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    out[r, c] = a[r, c] + 10
