"""Puzzle 53 — Wide loads: c = a @ b exactly, for int8 a and b given packed four values to an int32 word.

a4[r, w] holds a[r, 4w .. 4w+3] and b4[j, w] holds b[4w .. 4w+3, j], lowest byte first; a8[r, q] = a[r, q]
and b8[j, q] = b[q, j] are the same bytes as int8. Rows are padded with zeros to a multiple of WORDS words.
Blocks of (TILE, TILE) threads, grid (ceil(n / TILE), ceil(m / TILE)): thread (tx, ty) computes
c[by*TILE + ty, bx*TILE + tx]. Per step of WORDS words, each thread loads one word of a4 and one of b4 into
shared memory. Byte p of a word x, with its sign: numba.int32(numba.int8(x >> 8 * p)). You may use:
cuda.threadIdx / blockIdx, cuda.shared.array (at most 8448 bytes), cuda.syncthreads(), `if`,
`for ... in range(...)`, numba.int8 / numba.int32.
★★ needs exactly 4 sectors per load request (one word per lane, not one byte) and coalesced stores;
★★★ no shared-memory bank conflicts.
"""
import numba
from numba import cuda

TILE = 32     # the block is TILE x TILE threads, one output each
WORDS = 32    # int32 words of k per step: 128 int8 values


@cuda.jit
def matmul_int8_wide(a8, a4, b8, b4, c):
    m = a4.shape[0]
    kw = a4.shape[1]
    n = b4.shape[0]
    # FILL ME IN (about 24 lines)
    pass
