# WRONG: map-2d expect=mismatch
# Reads a[c, r] for out[r, c]: the x/y order mixed up in one of the two places, so out is the transpose of
# a + 10 (right only where the random matrix happens to be symmetric, which it never is).
from numba import cuda


@cuda.jit
def map_2d_kernel(out, a, n):
    c = cuda.threadIdx.x
    r = cuda.threadIdx.y
    if r < n and c < n:
        out[r, c] = a[c, r] + 10
