# WRONG: matmul expect=BarrierDivergence
# Puts the whole tile loop inside `if r < m and c < n`: threads outside `out` skip the barriers that the
# rest of their block waits at. They also skip their share of the tile loads, so in the edge blocks the
# threads inside `out` multiply tile slots that nobody filled (on a GPU: garbage, not a fault).
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
    if r < m and c < n:
        acc = 0.0
        for t0 in range(0, k, TILE):
            if t0 + tx < k:
                sa[ty, tx] = a[r, t0 + tx]
            else:
                sa[ty, tx] = 0.0
            if t0 + ty < k:
                sb[ty, tx] = b[t0 + ty, c]
            else:
                sb[ty, tx] = 0.0
            cuda.syncthreads()
            for j in range(TILE):
                acc += sa[ty, j] * sb[j, tx]
            cuda.syncthreads()
        out[r, c] = acc
