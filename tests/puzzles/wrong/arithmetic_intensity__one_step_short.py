# WRONG: arithmetic-intensity expect=mismatch
# Starts from v = a * x[i] + b and then runs the loop k times: k + 1 steps in all (and one step where
# k = 0 asks for none).
from numba import cuda


@cuda.jit
def iterate(x, y, n, a, b, k):
    i = cuda.grid(1)
    if i < n:
        v = a * x[i] + b
        for _ in range(k):
            v = a * v + b
        y[i] = v
