# WRONG: blocks expect=DataRace
# Uses only threadIdx.x: every block writes the same first blockDim.x elements (thread t of every block
# writes out[t], a write-write race between blocks), and the rest of `out` stays NaN.
from numba import cuda


@cuda.jit
def blocks_kernel(out, a, n):
    i = cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + 10
