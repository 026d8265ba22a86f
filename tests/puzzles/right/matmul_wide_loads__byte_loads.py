# RIGHT: matmul-wide-loads
# Puzzle 14's tiles on the byte views a8 and b8: right answers, coalesced, no bank conflicts, and one
# ld.global.s8 per lane -- 1 sector per request, four times the requests of the word loads. Earns one star;
# tests/puzzles/test_ch08_matmul_stars.py counts its requests by hand.
import numba
from numba import cuda

TILE = 32
PADDED = TILE + 1


@cuda.jit
def matmul_int8_wide(a8, a4, b8, b4, c):
    sa = cuda.shared.array((TILE, TILE), numba.int32)
    sb = cuda.shared.array((TILE, PADDED), numba.int32)
    m = a8.shape[0]
    k = a8.shape[1]
    n = b8.shape[0]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * TILE
    c0 = cuda.blockIdx.x * TILE
    acc = 0
    for q0 in range(0, k, TILE):
        if r0 + ty < m:
            sa[ty, tx] = a8[r0 + ty, q0 + tx]
        else:
            sa[ty, tx] = 0
        if c0 + ty < n:
            sb[ty, tx] = b8[c0 + ty, q0 + tx]
        else:
            sb[ty, tx] = 0
        cuda.syncthreads()
        for q in range(TILE):
            acc += sa[ty, q] * sb[tx, q]
        cuda.syncthreads()
    if r0 + ty < m and c0 + tx < n:
        c[r0 + ty, c0 + tx] = acc
