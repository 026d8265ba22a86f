# WRONG: axis-sum expect=DataRace
# Forgets the barrier inside the tree loop.
import numba
from numba import cuda

TPB = 64


@cuda.jit
def row_sum_kernel(out, a, cols):
    s = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    acc = 0.0
    for c in range(t, cols, TPB):
        acc += a[r, c]
    s[t] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        stride //= 2
    cuda.syncthreads()
    if t == 0:
        out[r] = s[0]
