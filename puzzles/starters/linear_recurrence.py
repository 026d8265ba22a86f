"""Puzzle 32 — Linear recurrence (selective scan).

One block per sequence s: h[s, t] = a[s, t] * h[s, t - 1] + b[s, t], with h[s, -1] = 0; L <= TPB.
Combine "(a1, b1) then (a2, b2)" as (a1 * a2, a2 * b1 + b2).
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array (at most 4 * TPB float32 values),
cuda.syncthreads(). Read `a` and `b` once and write `h` once per thread; no atomics.
"""

import numba
from numba import cuda

TPB = 64  # threads per block (the launch uses this)


@cuda.jit
def linear_recurrence_kernel(a, b, h, L):
    sa = cuda.shared.array((2, TPB), numba.float32)
    sb = cuda.shared.array((2, TPB), numba.float32)
    s = cuda.blockIdx.x
    t = cuda.threadIdx.x
    # FILL ME IN (about 24 lines)
    pass
