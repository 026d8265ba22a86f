"""Puzzle 31 — Segmented scan.

One block of TPB threads: out[i] = a[h] + ... + a[i], where h is the last index <= i with
flags[h] == 1 (or 0 if there is none); n <= TPB.
Allowed: cuda.threadIdx, cuda.shared.array (at most 4 * TPB int32 values), cuda.syncthreads().
Read `a` and `flags` once and write `out` once per thread; no atomics.
"""

import numba
from numba import cuda

TPB = 128  # threads in the one block (the launch uses this)


@cuda.jit
def segmented_scan_kernel(a, flags, out, n):
    vals = cuda.shared.array((2, TPB), numba.int32)
    heads = cuda.shared.array((2, TPB), numba.int32)
    t = cuda.threadIdx.x
    # FILL ME IN (about 22 lines)
    pass
