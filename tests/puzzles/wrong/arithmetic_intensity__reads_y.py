# WRONG: arithmetic-intensity expect=mismatch
# Iterates on y[i] before anything was stored there: the steps start from the NaN already in `y`
# instead of from x[i].
from numba import cuda


@cuda.jit
def iterate(x, y, n, a, b, k):
    i = cuda.grid(1)
    if i < n:
        for _ in range(k):
            y[i] = a * y[i] + b
