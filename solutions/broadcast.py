"""Reference solution — puzzle 5, Broadcast."""
from numba import cuda


@cuda.jit
def broadcast_kernel(out, a, b, rows, cols):
    c = cuda.threadIdx.x
    r = cuda.threadIdx.y
    if r < rows and c < cols:
        out[r, c] = a[r] + b[c]
