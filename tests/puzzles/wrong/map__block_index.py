# WRONG: map expect=DataRace
# Uses the block's index instead of the thread's: every thread of the one block gets i = 0 and they all
# write out[0] at once (a write-write race); the rest of `out` keeps its NaN sentinel.
from numba import cuda


@cuda.jit
def map_kernel(out, a):
    i = cuda.blockIdx.x
    out[i] = a[i] + 10
