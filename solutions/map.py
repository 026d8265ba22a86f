"""Reference solution — puzzle 1, Map."""
from numba import cuda


@cuda.jit
def map_kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10
