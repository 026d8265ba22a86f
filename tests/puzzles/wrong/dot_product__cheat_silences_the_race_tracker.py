# WRONG: dot-product expect=DataRace
# A cheat: at import, replace gpusim's race tracking with a no-op, then reduce without a barrier between the
# tree's steps. The race is still found: the simulator runs in the judging process, not here.
import numba
from numba import cuda

import gpusim
import gpusim.observe.races as races

races.track = lambda *args, **kwargs: None
races.record = lambda *args, **kwargs: None
_launch = gpusim.launch


def _quiet(*args, **kwargs):
    report = _launch(*args, **kwargs)
    report.faults = []
    return report


gpusim.launch = _quiet

TPB = 64


@cuda.jit
def dot_kernel(out, a, b, n):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        s[t] = a[i] * b[i]
    else:
        s[t] = 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        stride //= 2
    cuda.syncthreads()
    if t == 0:
        out[cuda.blockIdx.x] = s[0]
