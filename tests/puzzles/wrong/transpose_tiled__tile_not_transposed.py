# WRONG: transpose-tiled expect=UninitializedRead
# Moves the tile to its transposed place in `out` but copies it row for row (tile[y, tx] instead of
# tile[tx, y]): each tile lands in the right spot without being transposed itself. In a partial tile
# (the 2x3 example) that reads tile cells the load loop never filled; a full tile gives wrong values.
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
        r = c0 + y
        c = r0 + tx
        if r < cols and c < rows:
            out[r, c] = tile[y, tx]
