"""Reference solution for puzzle 28 (hillis-steele): double-buffered log-step inclusive scan of each tile."""

import numba
from numba import cuda

TPB = 64


@cuda.jit
def hillis_steele_kernel(a, out, n):
    buf = cuda.shared.array((2, TPB), numba.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        buf[0, t] = a[i]
    else:
        buf[0, t] = 0
    cuda.syncthreads()

    src = 0
    offset = 1
    while offset < TPB:
        v = buf[src, t]
        if t >= offset:
            v += buf[src, t - offset]
        buf[1 - src, t] = v
        cuda.syncthreads()
        src = 1 - src
        offset *= 2

    if i < n:
        out[i] = buf[src, t]
