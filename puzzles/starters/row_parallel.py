"""Puzzle 68 — Row-parallel linear.

partial_product, on every device: part = y . w (y is M x C, w is C x D, part M x D), one output per thread:
thread (c, r) of block (bx, by) computes part[by * 8 + r, bx * 32 + c].
reduce_rows, on device d for step = 0 .. steps-1, each time with another device's partial `part_src`:
z[r, c] (R x D, rows row0 .. of the whole output) = the sum over the steps of part_src[row0 + r, c],
plus bias[c] once, at the last step.
"""
import numba  # noqa: F401
from numba import cuda


@cuda.jit
def partial_product(y, w, part):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    # FILL ME IN (about 5 lines)
    pass


@cuda.jit
def reduce_rows(z, part_src, bias, row0, step, steps):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    # FILL ME IN (about 7 lines)
    pass
