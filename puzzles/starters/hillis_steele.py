"""Puzzle 28 — Hillis-Steele scan.

Each block scans its own tile of TPB elements: out[i] = a[tile start] + ... + a[i].
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array (at most 2 * TPB int32 values),
cuda.syncthreads(). Read `a` once and write `out` once per thread; no atomics.
"""

import numba
from numba import cuda

TPB = 64  # threads per block = elements per tile (the launch uses this)


@cuda.jit
def hillis_steele_kernel(a, out, n):
    buf = cuda.shared.array((2, TPB), numba.int32)  # two rows: read one, write the other
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    # FILL ME IN (about 16 lines)
    pass
