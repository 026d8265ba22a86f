# WRONG: guard expect=OutOfBounds
# `<=` instead of `<`: thread n still runs and reads a[n], one past the end.
from numba import cuda


@cuda.jit
def guard_kernel(out, a, n):
    i = cuda.threadIdx.x
    if i <= n:
        out[i] = a[i] + 10
