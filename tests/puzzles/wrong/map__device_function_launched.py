# WRONG: map expect=compile:device function
# `device=True` makes a function only callable from kernels; numba-cuda refuses to launch it.
from numba import cuda


@cuda.jit(device=True)
def map_kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10
