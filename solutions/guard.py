"""Reference solution — puzzle 3, Guard."""
from numba import cuda


@cuda.jit
def guard_kernel(out, a, n):
    i = cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + 10
