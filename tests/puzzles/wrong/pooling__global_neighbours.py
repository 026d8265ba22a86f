# WRONG: pooling expect=constraint:`a`
# Stages a[t] in shared memory but still fetches the two neighbours from global memory: 3 reads of `a`
# per thread where the puzzle allows 1.
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
        total = s[t]
        if t >= 1:
            total += a[t - 1]
        if t >= 2:
            total += a[t - 2]
        out[t] = total
