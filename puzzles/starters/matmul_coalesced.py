"""Puzzle 48 — Coalesced naive matmul: c = a @ b, one thread per element of c, a 1-D launch.

Blocks of TPB threads, ceil(m * n / TPB) blocks; the last block has spare threads. You decide which
element of c thread t computes. No shared memory. You may use: cuda.grid(1), a.shape, `if`,
`for ... in range(...)`, indexing, arithmetic, numba.float32(...).
★★ needs exactly 2.5 sectors per load request and 4 per store; ★★★ a float32 accumulator.
"""
import numba
from numba import cuda

TPB = 256   # threads per block (the launch uses this)


@cuda.jit
def matmul_naive(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    # FILL ME IN (about 8 lines)
    pass
