# WRONG: aos-to-soa expect=OutOfBounds
# The in-order mapping, but the guard checks the thread's own record index (block start + t) instead of
# the record each pass actually reads: in a partial block, passes 1-3 read rows past the end of `aos`.
import numba
from numba import cuda

TPB = 128
PASS = TPB // 4


@cuda.jit
def aos_to_soa(aos, soa, n):
    t = cuda.threadIdx.x
    f = t % 4
    r0 = cuda.blockIdx.x * TPB + t // 4
    if cuda.blockIdx.x * TPB + t < n:
        v = cuda.local.array(4, numba.float32)
        for k in range(4):
            v[k] = aos[r0 + k * PASS, f]
        for k in range(4):
            soa[f, r0 + k * PASS] = v[k]
