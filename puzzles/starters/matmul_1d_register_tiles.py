"""Puzzle 50 — 1-D register tiles: c = a @ b; a block of (BN, BM // TM) = (64, 8) threads owns a BM x BN
tile of c, and thread (tx, ty) computes TM outputs down column tx: rows ty*TM .. ty*TM + TM - 1.

Grid (ceil(n / BN), ceil(m / BM)). Per k-slice each thread loads one value of the BM x BK slice of a and
one of the BK x BN slice of b. You may use: cuda.threadIdx / blockIdx, cuda.shared.array (at most 4096
bytes), cuda.local.array(TM, numba.float32), cuda.syncthreads(), `if`, `for ... in range(...)`.
★★ needs 16 FLOPs per byte loaded; ★★★ 1.125 shared loads per multiply-add, coalesced, no bank conflicts.
"""
import numba
from numba import cuda

BM = 64   # rows of c per block
BN = 64   # columns of c per block
BK = 8    # depth of a k-slice
TM = 8    # outputs per thread


@cuda.jit
def matmul_1d_tiles(a, b, c):
    sa = cuda.shared.array((BM, BK), numba.float32)
    sb = cuda.shared.array((BK, BN), numba.float32)
    acc = cuda.local.array(TM, numba.float32)
    m, k = a.shape
    n = b.shape[1]
    # FILL ME IN (about 28 lines)
    pass
