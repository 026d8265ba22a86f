# WRONG: broadcast expect=OutOfBounds
# Every thread of the block writes: the block is larger than the output (4x4 threads for 3x4 elements),
# so the threads past the last row or column index a, b and out outside them.
from numba import cuda


@cuda.jit
def broadcast_kernel(out, a, b, rows, cols):
    c = cuda.threadIdx.x
    r = cuda.threadIdx.y
    out[r, c] = a[r] + b[c]
