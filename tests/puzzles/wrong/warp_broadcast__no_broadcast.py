# WRONG: warp-broadcast expect=mismatch
# Forgets the broadcast: after the shfl_down steps only lane 0 holds the warp's max; the other lanes
# subtract whatever partial maximum they were left with.
import math

import numba
from numba import cuda

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
    if i < n:
        out[i] = v - m
