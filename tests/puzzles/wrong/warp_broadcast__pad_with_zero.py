# WRONG: warp-broadcast expect=mismatch
# Pads the idle lanes of a partial warp with 0: in a warp of negative numbers the padding wins the max.
from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def subtract_warp_max(a, out, n):
    i = cuda.grid(1)
    v = a[i] if i < n else 0.0
    d = 16
    m = v
    while d > 0:
        m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, d))
        d //= 2
    if i < n:
        out[i] = v - m
