# WRONG: int8-matmul expect=DataRace
# Only one barrier per tile: a fast thread starts loading the next tile into ta/tb while slower threads
# of its block are still multiplying the current one (a write-after-read race on shared memory).
import numba
from numba import cuda

TILE = 16


@cuda.jit
def int8_matmul(a, b, scale_a, scale_b, c):
    ta = cuda.shared.array((TILE, TILE), numba.int8)
    tb = cuda.shared.array((TILE, TILE), numba.int8)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m = a.shape[0]
    k_total = a.shape[1]
    n = b.shape[1]
    acc = 0
    for k0 in range(0, k_total, TILE):
        if row < m and k0 + tx < k_total:
            ta[ty, tx] = a[row, k0 + tx]
        else:
            ta[ty, tx] = 0
        if k0 + ty < k_total and col < n:
            tb[ty, tx] = b[k0 + ty, col]
        else:
            tb[ty, tx] = 0
        cuda.syncthreads()
        for kk in range(TILE):
            acc += numba.int32(ta[ty, kk]) * numba.int32(tb[kk, tx])
    if row < m and col < n:
        c[row, col] = numba.float32(acc) * scale_a[row] * scale_b[col]
