# WRONG: map expect=compile:numba-cuda would refuse the launch
# An eager signature is valid numba-cuda (and accepted here without a GPU), but this one declares float64
# arrays while the puzzle passes float32 ones: the launch would find no matching definition.
from numba import cuda


@cuda.jit("void(float64[:], float64[:])")
def map_kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10
