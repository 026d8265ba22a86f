"""Puzzle 24 — Warp broadcast: out[i] = a[i] - (the max of the values of i's warp).

Blocks of TPB threads; float32. You may use: cuda.grid(1), cuda.laneid, cuda.shfl_down_sync,
cuda.shfl_xor_sync, cuda.shfl_sync (mask 0xffffffff: all 32 lanes must reach every call), max, math.inf,
numba.float32(...), `if`, loops. Read `a` once and write `out` once per thread. ★★★: no shared memory.
"""
import math

import numba
from numba import cuda

TPB = 128                # threads per block (the launch uses this)
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def subtract_warp_max(a, out, n):
    # FILL ME IN (about 10 lines)
    pass
