"""Puzzle 23 — Stream compaction in a warp: pack each warp's positive values, in order, at the start of
its 32-slot segment of `out`; count[w] = how many warp w kept. Other slots stay untouched.

Blocks of TPB threads. You may use: cuda.grid(1), cuda.laneid, cuda.ballot_sync (mask 0xffffffff),
cuda.lanemask_lt(), cuda.popc, `if`. Read `a` once per thread; no atomics. ★★: no shared memory.
"""
from numba import cuda

TPB = 128                # threads per block (the launch uses this)
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def compact(a, out, count, n):
    # FILL ME IN (about 9 lines)
    pass
