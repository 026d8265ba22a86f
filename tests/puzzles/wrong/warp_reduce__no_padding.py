# WRONG: warp-reduce expect=OutOfBounds
# Every lane reads a[i] before shuffling, as if n filled whole warps: the lanes of a partial warp read
# past the end of `a` instead of contributing 0.
from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def warp_sum(a, out, n):
    i = cuda.grid(1)
    v = a[i]
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 0 and i < n:
        out[i // 32] = v
