"""Puzzle 17 — Tiled transpose: out[j, i] = a[i, j] through a shared-memory tile.

Blocks of (TILE, ROWS) threads; block (bx, by) owns the tile a[by*TILE.., bx*TILE..] and each thread
moves TILE // ROWS elements. You may use: cuda.threadIdx / blockIdx, cuda.shared.array (one float32 tile,
at most TILE * (TILE + 1) * 4 bytes), cuda.local.array, cuda.syncthreads(), for-range loops, `if`.
★★ needs coalesced loads and stores, ★★★ no shared-memory bank conflicts.
"""
import numba
from numba import cuda

TILE = 32       # tile side (the launch uses this)
ROWS = 8        # rows of threads per block (the launch uses this)
PADDED = TILE   # the tile's row length: what should it be for ★★★?


@cuda.jit
def transpose_tiled(a, out, rows, cols):
    tile = cuda.shared.array((TILE, PADDED), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * TILE    # first row of a in this block's tile
    c0 = cuda.blockIdx.x * TILE    # first column of a in this block's tile
    # FILL ME IN (about 12 lines)
    pass
