# WRONG: matmul-thin-tiles expect=DataRace
# One barrier per step: the next slice overwrites sa and sb while slower warps still multiply the last one.
import numba
from numba import cuda

TILE = 32
BK = 16
HALF = TILE * BK   # 512 threads load the slice of a, the other 512 the slice of b


@cuda.jit
def matmul_tiled(a, b, c):
    sa = cuda.shared.array((TILE, BK), numba.float32)
    sb = cuda.shared.array((BK, TILE), numba.float32)
    m, k = a.shape
    n = b.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * TILE + tx
    r0 = cuda.blockIdx.y * TILE
    c0 = cuda.blockIdx.x * TILE
    acc = numba.float32(0.0)
    for k0 in range(0, k, BK):
        if t < HALF:
            i = t // BK
            q = t % BK
            if r0 + i < m and k0 + q < k:
                sa[i, q] = a[r0 + i, k0 + q]
            else:
                sa[i, q] = 0.0
        else:
            u = t - HALF
            q = u // TILE
            j = u % TILE
            if k0 + q < k and c0 + j < n:
                sb[q, j] = b[k0 + q, c0 + j]
            else:
                sb[q, j] = 0.0
        cuda.syncthreads()
        for q in range(BK):
            acc += sa[ty, q] * sb[q, tx]
    if r0 + ty < m and c0 + tx < n:
        c[r0 + ty, c0 + tx] = acc
