# WRONG: broadcast expect=OutOfBounds
# Indexes a by the column and b by the row; with rows != cols one of them is read past its end.
from numba import cuda


@cuda.jit
def broadcast_kernel(out, a, b, rows, cols):
    c = cuda.threadIdx.x
    r = cuda.threadIdx.y
    if r < rows and c < cols:
        out[r, c] = a[c] + b[r]
