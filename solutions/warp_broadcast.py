"""Reference solution — puzzle 24, Warp broadcast: max down to lane 0, then shfl_sync it to every lane."""
import math

import numba
from numba import cuda

TPB = 128
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def subtract_warp_max(a, out, n):
    i = cuda.grid(1)
    v = a[i] if i < n else numba.float32(-math.inf)
    m = v
    d = 16
    while d > 0:
        m = max(m, cuda.shfl_down_sync(FULL_MASK, m, d))
        d //= 2
    m = cuda.shfl_sync(FULL_MASK, m, 0)
    if i < n:
        out[i] = v - m
