"""Reference solution — puzzle 6, Blocks."""
from numba import cuda


@cuda.jit
def blocks_kernel(out, a, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + 10
