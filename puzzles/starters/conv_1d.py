"""Puzzle 11 — 1-D convolution: out[i] = sum over j < k of a[i + j] * w[j]; a counts as 0 past its end.

You may use: cuda.threadIdx.x, cuda.blockIdx.x, cuda.shared.array(shape, numba.float32),
cuda.syncthreads(), `if`, `for ... in range(...)`, indexing, arithmetic.
A shared array's shape must be a constant when the kernel compiles: use the module constants below
(numba-cuda rejects an expression such as `TPB + MAX_K - 1` written inside the kernel).
"""
import numba
from numba import cuda

TPB = 16    # threads per block = outputs per block (the launch uses this block size)
MAX_K = 4   # k <= MAX_K in every test case
TILE_LEN = TPB + MAX_K - 1   # inputs one block needs: its own TPB plus a halo of up to MAX_K - 1


@cuda.jit
def conv_kernel(out, a, w, n, k):
    # FILL ME IN (about 20 lines)
    pass
