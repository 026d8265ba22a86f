# WRONG: warp-broadcast expect=constraint:`a`
# Finds the max by having every thread read its whole warp segment from global memory: right values,
# but up to 32 reads of `a` per thread where shuffles need one.
from numba import cuda


@cuda.jit
def subtract_warp_max(a, out, n):
    i = cuda.grid(1)
    if i < n:
        base = i - i % 32
        m = a[base]
        for j in range(base + 1, min(base + 32, n)):
            m = max(m, a[j])
        out[i] = a[i] - m
