"""Reference solution — puzzle 7, Blocks 2-D."""
from numba import cuda


@cuda.jit
def blocks_2d_kernel(out, a, rows, cols):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if r < rows and c < cols:
        out[r, c] = a[r, c] + 10
