"""Reference solution — puzzle 22, Warp scan: five shfl_up steps, each lane adding only a real partner."""
from numba import cuda

TPB = 128
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def warp_scan(a, out, n):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = a[i] if i < n else 0
    d = 1
    while d < 32:
        t = cuda.shfl_up_sync(FULL_MASK, v, d)
        if lane >= d:
            v += t
        d *= 2
    if i < n:
        out[i] = v
