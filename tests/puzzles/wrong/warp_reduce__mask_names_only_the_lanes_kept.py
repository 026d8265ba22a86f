# WRONG: warp-reduce expect=BarrierDivergence
# "Only the lower d lanes need the result of this step", so the mask names just them: (1 << d) - 1. But all
# 32 lanes execute every shfl_down_sync, and a lane that executes a *_sync call its mask leaves out is
# undefined behaviour in PTX (shfl.sync: "the behavior is undefined if the executing thread is not in the
# membermask"); on a GPU it may well give the right sum, which is why the judge must say so.
from numba import cuda


@cuda.jit
def warp_sum(a, out, n):
    i = cuda.grid(1)
    v = a[i] if i < n else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync((1 << d) - 1, v, d)
        d //= 2
    if cuda.laneid == 0 and i < n:
        out[i // 32] = v
