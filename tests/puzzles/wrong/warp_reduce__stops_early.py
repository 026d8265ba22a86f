# WRONG: warp-reduce expect=mismatch
# Stops one step early (d = 16, 8, 4, 2, never 1): lane 0 ends with the sum of lanes 0, 2, 4, ..., 30;
# the odd lanes' values never reach it.
from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def warp_sum(a, out, n):
    i = cuda.grid(1)
    v = a[i] if i < n else 0.0
    d = 16
    while d > 1:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 0 and i < n:
        out[i // 32] = v
