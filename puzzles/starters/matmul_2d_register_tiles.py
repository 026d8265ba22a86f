"""Puzzle 51 — 2-D register tiles: c = a @ b; a block of (16, 16) threads owns a BM x BN = 128 x 128 tile of
c, and thread (tx, ty) computes the TM x TN = 8 x 8 outputs at rows ty*TM + i, columns tx*TN + j.

Grid (ceil(n / BN), ceil(m / BM)). Each k-slice (BM x BK of a, BK x BN of b) holds LOADS = 4 values per
thread: thread t = ty * 16 + tx loads elements e = t + NT * p, p = 0..LOADS-1, of each. You may use:
cuda.threadIdx / blockIdx, cuda.shared.array (at most 8192 bytes), cuda.local.array, cuda.syncthreads().
★★ needs 32 FLOPs per byte loaded; ★★★ 0.25 shared loads per multiply-add (an outer product from registers).
"""
import numba
from numba import cuda

BM = 128
BN = 128
BK = 8
TM = 8
TN = 8
NT = (BM // TM) * (BN // TN)   # 256 threads per block
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
    # FILL ME IN (about 40 lines)
    pass
