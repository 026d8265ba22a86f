"""Puzzle 40 — Int8 matmul with scales.

c[m, n] = (sum over k of a[m, k] * b[k, n]) * scale_a[m] * scale_b[n]; a and b are int8, c is float32.
Block (TILE, TILE): x is the column, y the row. Sum the products as integers (widen each int8 with
numba.int32(...) before multiplying) and apply both scales once, at the end.
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array (int8 tiles), cuda.syncthreads(), numba.int32 /
numba.float32 casts. Write each c element once; no atomics.
"""

import numba
from numba import cuda

TILE = 16  # the launch uses blocks of (TILE, TILE) threads


@cuda.jit
def int8_matmul(a, b, scale_a, scale_b, c):
    ta = cuda.shared.array((TILE, TILE), numba.int8)
    tb = cuda.shared.array((TILE, TILE), numba.int8)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    # FILL ME IN (about 18 lines)
    pass
