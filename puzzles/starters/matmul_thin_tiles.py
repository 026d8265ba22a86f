"""Puzzle 49 — Thin shared tiles: c = a @ b; a block of TILE x TILE threads owns a TILE x TILE tile of c
and walks along k in slices of depth BK: a TILE x BK slice of a and a BK x TILE slice of b per step.

Grid (ceil(n / TILE), ceil(m / TILE)), blocks (TILE, TILE): x = column, y = row. The two slices hold
one value per thread: let threads t = ty * TILE + tx < TILE * BK load the slice of a, the rest the slice
of b. You may use: cuda.threadIdx / blockIdx, cuda.shared.array (at most 4096 bytes per block),
cuda.syncthreads(), `if`, `for ... in range(...)`, numba.float32(...).
★★ needs 8 FLOPs per byte loaded; ★★★ coalesced loads and stores and no bank conflicts.
"""
import numba
from numba import cuda

TILE = 32   # the block is TILE x TILE threads, one output each
BK = 16     # the depth of a k-slice


@cuda.jit
def matmul_tiled(a, b, c):
    sa = cuda.shared.array((TILE, BK), numba.float32)
    sb = cuda.shared.array((BK, TILE), numba.float32)
    m, k = a.shape
    n = b.shape[1]
    # FILL ME IN (about 25 lines)
    pass
