# WRONG: axis-sum expect=constraint:`a`
# Thread 0 adds up the whole row on its own (the other 63 threads idle): up to 200 reads of `a` by one
# thread where each may read at most 4. It stages the result through shared memory, so only the read
# limit is broken.
import numba
from numba import cuda

TPB = 64


@cuda.jit
def row_sum_kernel(out, a, cols):
    s = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    if t == 0:
        acc = 0.0
        for c in range(cols):
            acc += a[r, c]
        s[0] = acc
    cuda.syncthreads()
    if t == 0:
        out[r] = s[0]
