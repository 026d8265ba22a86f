"""Reference solution — puzzle 18, Grid-stride loop."""
from numba import cuda

BLOCKS = 4
TPB = 64


@cuda.jit
def saxpy(alpha, x, y, out, n):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        out[i] = alpha * x[i] + y[i]
        i += stride
