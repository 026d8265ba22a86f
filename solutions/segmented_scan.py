"""Reference solution for puzzle 31 (segmented-scan): Hillis-Steele over (flag, value) pairs."""

import numba
from numba import cuda

TPB = 128


@cuda.jit
def segmented_scan_kernel(a, flags, out, n):
    vals = cuda.shared.array((2, TPB), numba.int32)
    heads = cuda.shared.array((2, TPB), numba.int32)
    t = cuda.threadIdx.x
    if t < n:
        vals[0, t] = a[t]
        heads[0, t] = flags[t]
    else:
        vals[0, t] = 0
        heads[0, t] = 0
    cuda.syncthreads()

    src = 0
    offset = 1
    while offset < TPB:
        v = vals[src, t]
        f = heads[src, t]
        if t >= offset:
            if f == 0:
                v += vals[src, t - offset]
            f = f | heads[src, t - offset]
        vals[1 - src, t] = v
        heads[1 - src, t] = f
        cuda.syncthreads()
        src = 1 - src
        offset *= 2

    if t < n:
        out[t] = vals[src, t]
