# WRONG: reduce-sequential expect=DataRace
# No barrier between the steps: thread 0 may read x[32] for step s=32 before thread 32 has added
# x[96] into it at step s=64 (they sit in different warps).
import numba
from numba import cuda

TPB = 128
BLOCKS = 4


@cuda.jit
def block_sum(a, out, n):
    x = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        x[t] = a[i]
    else:
        x[t] = 0.0
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if t < s:
            x[t] += x[t + s]
        s //= 2
    cuda.syncthreads()
    if t == 0:
        out[cuda.blockIdx.x] = x[0]
