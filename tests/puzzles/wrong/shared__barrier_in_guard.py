# WRONG: shared expect=BarrierDivergence
# The barrier sits inside `if i < n`: in the last, short block the idle threads never reach it. The CUDA
# Programming Guide leaves that undefined. (compute-sanitizer's synccheck stays silent on this exact kernel
# on an H200: the skipping threads exit at once, and exited threads count as arrived. Give them any work
# after the `if`, such as another barrier, and that luck ends.)
import numba
from numba import cuda

TPB = 8


@cuda.jit
def reverse_kernel(out, a, n):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * TPB
    if start + t < n:
        s[t] = a[start + t]
        cuda.syncthreads()
        length = min(TPB, n - start)
        out[start + t] = s[length - 1 - t]
