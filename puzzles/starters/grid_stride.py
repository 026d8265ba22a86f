"""Puzzle 18 — Grid-stride loop: out[i] = alpha * x[i] + y[i] for i < n, with a fixed grid.

The launch is always BLOCKS blocks of TPB threads, whatever n is (up to 5000).
You may use: cuda.grid(1), cuda.gridsize(1), cuda.threadIdx / blockIdx / blockDim / gridDim, while or
for-range loops, `if`. No thread may handle more than 40 elements (★★: 20).
"""
from numba import cuda

BLOCKS = 4  # blocks in the grid (the launch uses this)
TPB = 64    # threads per block (the launch uses this)


@cuda.jit
def saxpy(alpha, x, y, out, n):
    # FILL ME IN (about 5 lines)
    pass
