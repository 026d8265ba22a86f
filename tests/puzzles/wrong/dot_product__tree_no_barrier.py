# WRONG: dot-product expect=DataRace
# No barrier between the tree's steps: a thread may read s[t + stride] before its owner has finished
# adding into it in the previous step.
import numba
from numba import cuda

TPB = 64


@cuda.jit
def dot_kernel(out, a, b, n):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        s[t] = a[i] * b[i]
    else:
        s[t] = 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        stride //= 2
    cuda.syncthreads()
    if t == 0:
        out[cuda.blockIdx.x] = s[0]
