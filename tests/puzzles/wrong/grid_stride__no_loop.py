# WRONG: grid-stride expect=mismatch
# One element per thread, as in chapter 1: fine while n <= 256, but the grid never grows, so from
# element 256 on nothing is written.
from numba import cuda


@cuda.jit
def saxpy(alpha, x, y, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = alpha * x[i] + y[i]
