# WRONG: blocks-2d expect=mismatch
# Takes the row from x and the column from y. The guard keeps it in bounds, but the grid is shaped for
# x = columns, so on a 37x45 matrix columns 40..44 are never reached (they stay NaN).
from numba import cuda


@cuda.jit
def blocks_2d_kernel(out, a, rows, cols):
    r = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if r < rows and c < cols:
        out[r, c] = a[r, c] + 10
