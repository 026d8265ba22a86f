"""Puzzle 52 — Conflict-free register tiles: puzzle 51 again. A block of (16, 16) threads owns a 128 x 128
tile of c, each thread 8 x 8 of its outputs: which 8 rows and 8 columns should thread (tx, ty) own?

Grid (ceil(n / BN), ceil(m / BM)). Each k-slice (BM x BK of a, BK x BN of b) holds LOADS = 4 values per
thread: thread t = ty * 16 + tx loads elements e = t + NT * p, p = 0..LOADS-1, of each. You may use:
cuda.threadIdx / blockIdx, cuda.shared.array (at most 8448 bytes), cuda.local.array, cuda.syncthreads().
Constraints: 32 FLOPs per byte loaded and 0.25 shared loads per multiply-add, as in puzzle 51.
★★ needs coalesced stores; ★★★ no shared-memory bank conflicts.
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
def matmul_conflict_free(a, b, c):
    sa = cuda.shared.array((BM, BK), numba.float32)
    sb = cuda.shared.array((BK, BN), numba.float32)
    acc = cuda.local.array((TM, TN), numba.float32)
    ra = cuda.local.array(TM, numba.float32)
    rb = cuda.local.array(TN, numba.float32)
    m, k = a.shape
    n = b.shape[1]
    # FILL ME IN (about 40 lines)
    pass
