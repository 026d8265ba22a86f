# WRONG: histogram expect=compile:no cuda.atomic.inc for int32 arrays
# cuda.atomic.inc(ary, idx, val) "counts up to val": with val = 2**31 - 1 it is a plain increment, and it
# gives the right counts in numba's own simulator. But numba-cuda types atomic.inc (and dec) for uint32 and
# uint64 arrays only (cudadecl.py: unsigned_int_numba_types), and the shared histogram here is int32: on a
# GPU the kernel does not compile.
import numba
from numba import cuda

BINS = 100
TPB = 128


@cuda.jit
def histogram(values, hist, n):
    sh = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    b = t
    while b < BINS:
        sh[b] = 0
        b += TPB
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        cuda.atomic.inc(sh, values[i], 2147483647)
        i += stride
    cuda.syncthreads()
    b = t
    while b < BINS:
        if sh[b] > 0:
            cuda.atomic.add(hist, b, sh[b])
        b += TPB
