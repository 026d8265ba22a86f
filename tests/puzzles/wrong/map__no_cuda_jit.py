# WRONG: map expect=compile:no `@cuda.jit` decorator
# The kernel is right but not decorated: on a GPU a plain Python function cannot be launched.
from numba import cuda


def map_kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10
