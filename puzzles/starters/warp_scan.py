"""Puzzle 22 — Warp scan: out[i] = a[first element of i's warp] + ... + a[i] (int32, inclusive).

Blocks of TPB threads. You may use: cuda.grid(1), cuda.laneid, cuda.shfl_up_sync (mask 0xffffffff:
all 32 lanes must reach every call), `if`, while / for-range loops. Read `a` once and write `out` once
per thread; no atomics. ★★★: no shared memory.
"""
from numba import cuda

TPB = 128                # threads per block (the launch uses this)
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def warp_scan(a, out, n):
    # FILL ME IN (about 10 lines)
    pass
