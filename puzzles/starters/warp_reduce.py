"""Puzzle 21 — Warp reduce: out[w] = sum of the 32 elements of warp w (0 past n).

Blocks of TPB threads. You may use: cuda.grid(1), cuda.laneid (or threadIdx.x % 32),
cuda.shfl_down_sync / shfl_xor_sync (mask 0xffffffff: all 32 lanes must reach every call), `if`,
for-range loops. Read `a` once per thread; no atomics. ★★★: no shared memory.
"""
from numba import cuda

TPB = 128                # threads per block (the launch uses this)
FULL_MASK = 0xFFFFFFFF   # every lane of the warp takes part


@cuda.jit
def warp_sum(a, out, n):
    # FILL ME IN (about 9 lines)
    pass
