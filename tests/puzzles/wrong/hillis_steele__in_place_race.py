# WRONG: hillis-steele expect=DataRace
# One shared buffer updated in place: in the same step thread t reads slot t - offset while thread
# t - offset overwrites it, with no barrier in between. On a GPU this is right or wrong by timing.
import numba
from numba import cuda

TPB = 64


@cuda.jit
def hillis_steele_kernel(a, out, n):
    buf = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        buf[t] = a[i]
    else:
        buf[t] = 0
    cuda.syncthreads()
    offset = 1
    while offset < TPB:
        if t >= offset:
            buf[t] += buf[t - offset]
        cuda.syncthreads()
        offset *= 2
    if i < n:
        out[i] = buf[t]
