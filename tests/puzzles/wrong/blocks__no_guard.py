# WRONG: blocks expect=OutOfBounds
# Right global index, but no guard: the idle threads of the last block run past the end.
from numba import cuda


@cuda.jit
def blocks_kernel(out, a, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[i] = a[i] + 10
