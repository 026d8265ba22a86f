# WRONG: aos-to-soa expect=mismatch
# Each pass advances by TPB records instead of TPB // 4: passes 1-3 land in other blocks' records (or
# past n), so three quarters of every block's records are never written and stay NaN.
import numba
from numba import cuda

TPB = 128


@cuda.jit
def aos_to_soa(aos, soa, n):
    t = cuda.threadIdx.x
    f = t % 4
    r0 = cuda.blockIdx.x * TPB + t // 4
    v = cuda.local.array(4, numba.float32)
    for k in range(4):
        r = r0 + k * TPB
        if r < n:
            v[k] = aos[r, f]
    for k in range(4):
        r = r0 + k * TPB
        if r < n:
            soa[f, r] = v[k]
