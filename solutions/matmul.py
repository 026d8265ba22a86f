"""Reference solution — puzzle 14, Matmul (shared TILE x TILE tiles, zero-padded at the edges)."""
import numba
from numba import cuda

TILE = 16


@cuda.jit
def matmul_kernel(out, a, b, m, k, n):
    sa = cuda.shared.array((TILE, TILE), numba.float32)
    sb = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    r = cuda.blockIdx.y * TILE + ty
    acc = 0.0
    for t0 in range(0, k, TILE):
        if r < m and t0 + tx < k:
            sa[ty, tx] = a[r, t0 + tx]
        else:
            sa[ty, tx] = 0.0
        if t0 + ty < k and c < n:
            sb[ty, tx] = b[t0 + ty, c]
        else:
            sb[ty, tx] = 0.0
        cuda.syncthreads()
        for j in range(TILE):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()
    if r < m and c < n:
        out[r, c] = acc
