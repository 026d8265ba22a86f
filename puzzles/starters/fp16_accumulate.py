"""Puzzle 39 — fp16 in, fp32 accumulate.

One block per row: y[r] = sum_c W[r, c] * x[c], with W and x float16 and y float32.
Accumulate in float32: convert with numba.float32(...) before multiplying.
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array, cuda.syncthreads(), numba.float32 / np.float16
casts. At most cols / TPB reads of W and of x per thread; no atomics.
"""

import numba
from numba import cuda

TPB = 128  # threads per block, one block per row (the launch uses this)


@cuda.jit
def gemv_fp16_kernel(W, x, y):
    shared = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = W.shape[1]
    # FILL ME IN (about 14 lines)
    pass
