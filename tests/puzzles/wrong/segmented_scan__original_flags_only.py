# WRONG: segmented-scan expect=mismatch
# Decides whether to add the left partner from the element's *original* flag only. A head strictly
# between t - offset and t (already folded into t's partial sum) is missed, and values from the
# previous segment leak across it.
import numba
from numba import cuda

TPB = 128


@cuda.jit
def segmented_scan_kernel(a, flags, out, n):
    vals = cuda.shared.array((2, TPB), numba.int32)
    t = cuda.threadIdx.x
    head = 0
    if t < n:
        vals[0, t] = a[t]
        head = flags[t]
    else:
        vals[0, t] = 0
    cuda.syncthreads()
    src = 0
    offset = 1
    while offset < TPB:
        v = vals[src, t]
        if t >= offset and head == 0:
            v += vals[src, t - offset]
        vals[1 - src, t] = v
        cuda.syncthreads()
        src = 1 - src
        offset *= 2
    if t < n:
        out[t] = vals[src, t]
