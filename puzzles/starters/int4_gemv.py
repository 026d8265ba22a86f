"""Puzzle 41 — Int4 GEMV.

y[r] = sum over k of (q[r, k] - zeros[r, k // GROUP]) * scales[r, k // GROUP] * x[k], where the 4-bit code
q[r, k] is the low nibble of w_packed[r, k // 2] for even k and the high nibble for odd k.
One block of TPB threads per row. Decode each weight in registers; never build the float matrix.
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array, cuda.syncthreads(), bit operations (>>, &),
numba.float32(...). Write y[row] once.
"""

import numba
from numba import cuda

TPB = 32    # threads per block (the launch uses this)
GROUP = 16  # weights per scale / zero point


@cuda.jit
def int4_gemv(w_packed, scales, zeros, x, y):
    partial = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    # FILL ME IN (about 16 lines)
    pass
