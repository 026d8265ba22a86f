"""Reference solution — puzzle 51, 2-D register tiles (128x128 per block, 8x8 outputs per thread)."""
import numba
from numba import cuda

BM = 128
BN = 128
BK = 8
TM = 8
TN = 8
NT = (BM // TM) * (BN // TN)   # 256 threads
LOADS = BM * BK // NT          # 4 values of each slice per thread


@cuda.jit
def matmul_2d_tiles(a, b, c):
    sa = cuda.shared.array((BM, BK), numba.float32)
    sb = cuda.shared.array((BK, BN), numba.float32)
    acc = cuda.local.array((TM, TN), numba.float32)
    ra = cuda.local.array(TM, numba.float32)
    rb = cuda.local.array(TN, numba.float32)
    m, k = a.shape
    n = b.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * (BN // TN) + tx
    r0 = cuda.blockIdx.y * BM
    c0 = cuda.blockIdx.x * BN
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0.0
    for k0 in range(0, k, BK):
        for p in range(LOADS):
            e = t + NT * p
            i = e // BK
            q = e % BK
            if r0 + i < m and k0 + q < k:
                sa[i, q] = a[r0 + i, k0 + q]
            else:
                sa[i, q] = 0.0
            q = e // BN
            j = e % BN
            if k0 + q < k and c0 + j < n:
                sb[q, j] = b[k0 + q, c0 + j]
            else:
                sb[q, j] = 0.0
        cuda.syncthreads()
        for q in range(BK):
            for i in range(TM):
                ra[i] = sa[ty * TM + i, q]
            for j in range(TN):
                rb[j] = sb[q, tx * TN + j]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += ra[i] * rb[j]
        cuda.syncthreads()
    for i in range(TM):
        r = r0 + ty * TM + i
        for j in range(TN):
            col = c0 + tx * TN + j
            if r < m and col < n:
                c[r, col] = acc[i, j]
