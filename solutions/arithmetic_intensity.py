"""Reference solution — puzzle 20, Arithmetic intensity: v stays in a register for all k steps."""
from numba import cuda

TPB = 128


@cuda.jit
def iterate(x, y, n, a, b, k):
    i = cuda.grid(1)
    if i < n:
        v = x[i]
        for _ in range(k):
            v = a * v + b
        y[i] = v
