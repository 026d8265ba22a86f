"""Puzzle 54 — Double buffering: puzzle 50's kernel (64 x 64 tiles, 8 outputs per thread down a column) with
two buffers of each slice: load slice s+1 into one while computing on slice s in the other, and one
barrier per step.

Blocks of (BN, BM // TM) = (64, 8) threads, grid (ceil(n / BN), ceil(m / BM)); thread (tx, ty) owns
column tx, rows ty*TM .. ty*TM + TM - 1. You may use: cuda.threadIdx / blockIdx, cuda.shared.array
(exactly two buffers: 8192 bytes), cuda.local.array, cuda.syncthreads(), device functions
(@cuda.jit(device=True)), `if`, `for ... in range(...)`.
★★ needs puzzle 50's reuse (16 FLOPs per byte, 1.125 shared loads per multiply-add); ★★★ coalesced, no
bank conflicts.
"""
import numba
from numba import cuda

BM = 64
BN = 64
BK = 8
TM = 8


@cuda.jit
def matmul_double_buffered(a, b, c):
    sa = cuda.shared.array((2, BM, BK), numba.float32)
    sb = cuda.shared.array((2, BK, BN), numba.float32)
    acc = cuda.local.array(TM, numba.float32)
    m, k = a.shape
    n = b.shape[1]
    # FILL ME IN (about 35 lines, or 25 with a device function that loads one slice)
    pass
