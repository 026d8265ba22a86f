# WRONG: warp-scan expect=DataRace
# The scan done in shared memory, warp-synchronously, without cuda.syncwarp(): lanes of a warp are not
# guaranteed to run in lockstep (since Volta), so lane l may read buf[l - d] before or after lane l - d
# updated it in the same step.
import numba
from numba import cuda

TPB = 128


@cuda.jit
def warp_scan(a, out, n):
    buf = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    lane = t % 32
    buf[t] = a[i] if i < n else 0
    d = 1
    while d < 32:
        if lane >= d:
            buf[t] += buf[t - d]
        d *= 2
    if i < n:
        out[i] = buf[t]
