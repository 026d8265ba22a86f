"""Puzzle 15 — AoS to SoA: soa[f, r] = aos[r, f]; aos is (n, 4) float32, soa is (4, n).

The launch has one thread per record (n threads in blocks of TPB); each thread moves 4 floats.
You may use: cuda.threadIdx / blockIdx / grid, `if`, integer `//` and `%`, for-range loops,
cuda.local.array. At most 4 reads of `aos` and 4 writes to `soa` per thread.
★★ needs coalesced stores, ★★★ coalesced loads too (every sector a warp touches fully used).
"""
import numba
from numba import cuda

TPB = 128  # threads per block = records per block (the launch uses this)


@cuda.jit
def aos_to_soa(aos, soa, n):
    # FILL ME IN (about 12 lines)
    pass
