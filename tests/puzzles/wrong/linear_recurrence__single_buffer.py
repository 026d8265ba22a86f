# WRONG: linear-recurrence expect=DataRace
# Updates one pair of shared arrays in place: in a step, thread t reads slot t - offset while thread
# t - offset is overwriting it with its own new pair. Only a second buffer (or a barrier between the reads
# and the writes) makes the step well defined.
import numba
from numba import cuda

TPB = 64


@cuda.jit
def linear_recurrence_kernel(a, b, h, L):
    sa = cuda.shared.array(TPB, numba.float32)
    sb = cuda.shared.array(TPB, numba.float32)
    s = cuda.blockIdx.x
    t = cuda.threadIdx.x
    if t < L:
        sa[t] = a[s, t]
        sb[t] = b[s, t]
    else:
        sa[t] = 1.0
        sb[t] = 0.0
    cuda.syncthreads()
    offset = 1
    while offset < TPB:
        if t >= offset:
            a1 = sa[t - offset]
            b1 = sb[t - offset]
            sb[t] = sa[t] * b1 + sb[t]
            sa[t] = a1 * sa[t]
        cuda.syncthreads()
        offset *= 2
    if t < L:
        h[s, t] = sb[t]
