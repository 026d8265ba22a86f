# WRONG: pooling expect=OutOfBounds
# No check at the left edge: thread 0 reads s[-1] and s[-2]. (On a GPU that is memory before the array;
# the simulator reports negative indices as out of bounds.)
import numba
from numba import cuda

TPB = 16


@cuda.jit
def pool_kernel(out, a, n):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    if t < n:
        s[t] = a[t]
    cuda.syncthreads()
    if t < n:
        out[t] = s[t - 2] + s[t - 1] + s[t]
