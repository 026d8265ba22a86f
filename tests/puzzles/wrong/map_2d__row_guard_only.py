# WRONG: map-2d expect=OutOfBounds
# Guards the row but not the column: threads with c >= n read past the end of a row.
from numba import cuda


@cuda.jit
def map_2d_kernel(out, a, n):
    c = cuda.threadIdx.x
    r = cuda.threadIdx.y
    if r < n:
        out[r, c] = a[r, c] + 10
