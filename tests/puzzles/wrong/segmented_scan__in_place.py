# WRONG: segmented-scan expect=DataRace
# Hillis-Steele in place, one array for the values and one for the flags: at each step thread t reads slot
# t - offset while thread t - offset is updating it. One barrier per step orders the steps, not the reads
# and writes inside a step (the reference double-buffers for this).
import numba
from numba import cuda

TPB = 128


@cuda.jit
def segmented_scan_kernel(a, flags, out, n):
    vals = cuda.shared.array(TPB, numba.int32)
    heads = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    if t < n:
        vals[t] = a[t]
        heads[t] = flags[t]
    else:
        vals[t] = 0
        heads[t] = 0
    cuda.syncthreads()
    offset = 1
    while offset < TPB:
        if t >= offset:
            if heads[t] == 0:
                vals[t] += vals[t - offset]
            heads[t] = heads[t] | heads[t - offset]
        cuda.syncthreads()
        offset *= 2
    if t < n:
        out[t] = vals[t]
