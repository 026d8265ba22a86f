"""Reference solution — puzzle 50, 1-D register tiles (64x64 per block, 8 outputs per thread)."""
import numba
from numba import cuda

BM = 64
BN = 64
BK = 8
TM = 8


@cuda.jit
def matmul_1d_tiles(a, b, c):
    sa = cuda.shared.array((BM, BK), numba.float32)
    sb = cuda.shared.array((BK, BN), numba.float32)
    acc = cuda.local.array(TM, numba.float32)
    m, k = a.shape
    n = b.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * BM
    c0 = cuda.blockIdx.x * BN
    t = ty * BN + tx
    ia = t // BK            # the element of the a slice this thread loads
    qa = t % BK
    for i in range(TM):
        acc[i] = 0.0
    for k0 in range(0, k, BK):
        if r0 + ia < m and k0 + qa < k:
            sa[ia, qa] = a[r0 + ia, k0 + qa]
        else:
            sa[ia, qa] = 0.0
        if k0 + ty < k and c0 + tx < n:
            sb[ty, tx] = b[k0 + ty, c0 + tx]
        else:
            sb[ty, tx] = 0.0
        cuda.syncthreads()
        for q in range(BK):
            bv = sb[q, tx]
            for i in range(TM):
                acc[i] += sa[ty * TM + i, q] * bv
        cuda.syncthreads()
    for i in range(TM):
        r = r0 + ty * TM + i
        if r < m and c0 + tx < n:
            c[r, c0 + tx] = acc[i]
