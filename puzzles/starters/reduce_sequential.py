"""Puzzle 19 — Reduce with sequential addressing: out[b] = sum of block b's TPB elements of a.

Always BLOCKS blocks of TPB threads; elements past n count as 0 (a block may be empty: its sum is 0).
You may use: cuda.threadIdx / blockIdx, cuda.shared.array (at most TPB float32), cuda.syncthreads(),
while / for-range loops, `if`. Read `a` at most once per thread; no atomics.
★★ needs busy warps (no divergent tree steps), ★★★ no bank conflicts.
"""
import numba
from numba import cuda

TPB = 128    # threads per block (the launch uses this)
BLOCKS = 4   # blocks (the launch uses this)


@cuda.jit
def block_sum(a, out, n):
    x = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    # FILL ME IN (about 10 lines)
    pass
