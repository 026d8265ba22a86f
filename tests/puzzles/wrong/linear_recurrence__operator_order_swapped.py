# WRONG: linear-recurrence expect=mismatch
# Composes the maps in the wrong order: (a1, b1) then (a2, b2) gives b = a1*b2 + b1, as if the later step
# ran first. The operator is not commutative; with non-constant a the states come out wrong.
import numba
from numba import cuda

TPB = 64


@cuda.jit
def linear_recurrence_kernel(a, b, h, L):
    sa = cuda.shared.array((2, TPB), numba.float32)
    sb = cuda.shared.array((2, TPB), numba.float32)
    s = cuda.blockIdx.x
    t = cuda.threadIdx.x
    if t < L:
        sa[0, t] = a[s, t]
        sb[0, t] = b[s, t]
    else:
        sa[0, t] = 1.0
        sb[0, t] = 0.0
    cuda.syncthreads()

    src = 0
    offset = 1
    while offset < TPB:
        a2 = sa[src, t]
        b2 = sb[src, t]
        if t >= offset:
            a1 = sa[src, t - offset]
            b1 = sb[src, t - offset]
            b2 = a1 * b2 + b1
            a2 = a1 * a2
        sa[1 - src, t] = a2
        sb[1 - src, t] = b2
        cuda.syncthreads()
        src = 1 - src
        offset *= 2

    if t < L:
        h[s, t] = sb[src, t]
