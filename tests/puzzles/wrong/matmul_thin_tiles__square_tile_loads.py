# WRONG: matmul-thin-tiles expect=OutOfBounds
# Loads as in puzzle 14, sa[ty, tx] = a[r, k0 + tx]: but the slice of a is only BK = 16 columns wide, so
# threads with tx >= 16 write past the end of each row of sa.
import numba
from numba import cuda

TILE = 32
BK = 16


@cuda.jit
def matmul_tiled(a, b, c):
    sa = cuda.shared.array((TILE, BK), numba.float32)
    sb = cuda.shared.array((BK, TILE), numba.float32)
    m, k = a.shape
    n = b.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = numba.float32(0.0)
    for k0 in range(0, k, BK):
        if r < m and k0 + tx < k:
            sa[ty, tx] = a[r, k0 + tx]
        else:
            sa[ty, tx] = 0.0
        if ty < BK:
            if k0 + ty < k and col < n:
                sb[ty, tx] = b[k0 + ty, col]
            else:
                sb[ty, tx] = 0.0
        cuda.syncthreads()
        for q in range(BK):
            acc += sa[ty, q] * sb[q, tx]
        cuda.syncthreads()
    if r < m and col < n:
        c[r, col] = acc
