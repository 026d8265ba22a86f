"""Reference solution — puzzle 17, Tiled transpose.

Rows of `a` go into rows of the tile (coalesced loads), columns of the tile come out as rows of `out`
(coalesced stores). The padding column makes tile[tx, y] for tx = 0..31 fall in 32 different banks.

Each thread loads its four elements into registers before it writes any of them to the tile, so its four
loads are in flight together: one wait for DRAM instead of four. The loops have a constant trip count
(PER_THREAD), which the compiler unrolls whole, so `vals` lives in registers.
"""
import numba
from numba import cuda

TILE = 32
ROWS = 8
PADDED = TILE + 1
PER_THREAD = TILE // ROWS   # 4: rows ty, ty + 8, ty + 16, ty + 24 of the tile


@cuda.jit
def transpose_tiled(a, out, rows, cols):
    tile = cuda.shared.array((TILE, PADDED), numba.float32)
    vals = cuda.local.array(PER_THREAD, numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * TILE
    c0 = cuda.blockIdx.x * TILE
    c = c0 + tx
    for k in range(PER_THREAD):         # all four loads first ...
        r = r0 + ty + k * ROWS
        # outside `a` the tile gets a 0, which the guard below never lets into `out`
        vals[k] = a[r, c] if r < rows and c < cols else numba.float32(0)
    for k in range(PER_THREAD):         # ... then the four stores into the tile
        tile[ty + k * ROWS, tx] = vals[k]
    cuda.syncthreads()
    for k in range(PER_THREAD):
        y = ty + k * ROWS
        r = c0 + y          # row of out = column of a
        c = r0 + tx         # column of out = row of a
        if r < cols and c < rows:
            out[r, c] = tile[tx, y]
