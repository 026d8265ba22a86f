"""Puzzle 20 — Arithmetic intensity: y[i] = the result of applying v = a * v + b to v = x[i], k times.

One thread per element (blocks of TPB threads). a and b are float32, k is an int (0..256).
You may use: cuda.grid(1), `if`, for-range loops, local variables.
★★ needs 8 bytes per element (x read once, y written once), ★★★ coalescing and 2 FLOPs per step.
"""
from numba import cuda

TPB = 128  # threads per block (the launch uses this)


@cuda.jit
def iterate(x, y, n, a, b, k):
    # FILL ME IN (about 6 lines)
    pass
