# WRONG: transpose-tiled expect=DataRace
# No cuda.syncthreads() between filling the tile and reading it: thread (tx, y) reads tile[tx, y], which
# thread (y, tx) wrote — another warp that may not have run yet.
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
    for y in range(ty, TILE, ROWS):
        r = c0 + y
        c = r0 + tx
        if r < cols and c < rows:
            out[r, c] = tile[tx, y]
