"""Reference solution — puzzle 17, Tiled transpose.

Rows of `a` go into rows of the tile (coalesced loads), columns of the tile come out as rows of `out`
(coalesced stores). The padding column makes tile[tx, y] for tx = 0..31 fall in 32 different banks.
"""
import numba
from numba import cuda

TILE = 32
ROWS = 8
PADDED = TILE + 1


@cuda.jit
def transpose_tiled(a, out, rows, cols):
    tile = cuda.shared.array((TILE, PADDED), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * TILE
    c0 = cuda.blockIdx.x * TILE
    for y in range(ty, TILE, ROWS):
        r = r0 + y
        c = c0 + tx
        if r < rows and c < cols:
            tile[y, tx] = a[r, c]
    cuda.syncthreads()
    for y in range(ty, TILE, ROWS):
        r = c0 + y          # row of out = column of a
        c = r0 + tx         # column of out = row of a
        if r < cols and c < rows:
            out[r, c] = tile[tx, y]
