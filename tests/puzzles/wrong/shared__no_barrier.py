# WRONG: shared expect=DataRace
# No barrier between the phases: thread t reads a slot that another thread may not have written yet.
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
    length = min(TPB, n - start)
    if t < length:
        out[start + t] = s[length - 1 - t]
