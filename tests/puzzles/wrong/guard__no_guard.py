# WRONG: guard expect=OutOfBounds
# Forgets the guard: the threads past the end read a[n] and beyond.
from numba import cuda


@cuda.jit
def guard_kernel(out, a, n):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10
