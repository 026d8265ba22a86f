# WRONG: map expect=compile:plain Python function
# The kernel calls a helper that has no `@cuda.jit(device=True)`: numba-cuda cannot call plain Python.
from numba import cuda


def add_ten(x):
    return x + 10


@cuda.jit
def map_kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = add_ten(a[i])
