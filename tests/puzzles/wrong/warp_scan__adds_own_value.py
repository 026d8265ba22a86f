# WRONG: warp-scan expect=mismatch
# Adds whatever shfl_up_sync returns, in every lane: lanes below d get their own value back and add it,
# so lane 0 ends with 32 * a[0] and every lane's low part is doubled.
from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def warp_scan(a, out, n):
    i = cuda.grid(1)
    v = a[i] if i < n else 0
    d = 1
    while d < 32:
        v += cuda.shfl_up_sync(FULL_MASK, v, d)
        d *= 2
    if i < n:
        out[i] = v
