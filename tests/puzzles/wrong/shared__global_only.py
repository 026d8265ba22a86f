# WRONG: shared expect=constraint:uses shared memory
# Right numbers, straight from global memory: skips the shared-memory hand-over the puzzle is about.
from numba import cuda

TPB = 8


@cuda.jit
def reverse_kernel(out, a, n):
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * TPB
    length = min(TPB, n - start)
    if t < length:
        out[start + t] = a[start + length - 1 - t]
