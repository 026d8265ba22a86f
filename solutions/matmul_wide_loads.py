"""Reference solution — puzzle 53, Wide loads: int8 operands loaded four to an int32 word (a8 and b8 unused)."""
import numba
from numba import cuda

TILE = 32
WORDS = 32       # int32 words of k per step (128 int8 values)
PADDED = WORDS + 1


@cuda.jit
def matmul_int8_wide(a8, a4, b8, b4, c):
    sa = cuda.shared.array((TILE, WORDS), numba.int32)
    sb = cuda.shared.array((TILE, PADDED), numba.int32)
    m = a4.shape[0]
    kw = a4.shape[1]
    n = b4.shape[0]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * TILE
    c0 = cuda.blockIdx.x * TILE
    acc = 0
    for w0 in range(0, kw, WORDS):
        if r0 + ty < m:
            sa[ty, tx] = a4[r0 + ty, w0 + tx]
        else:
            sa[ty, tx] = 0
        if c0 + ty < n:
            sb[ty, tx] = b4[c0 + ty, w0 + tx]
        else:
            sb[ty, tx] = 0
        cuda.syncthreads()
        for w in range(WORDS):
            x = sa[ty, w]
            y = sb[tx, w]
            for p in range(4):
                acc += numba.int32(numba.int8(x >> (8 * p))) * numba.int32(numba.int8(y >> (8 * p)))
        cuda.syncthreads()
    if r0 + ty < m and c0 + tx < n:
        c[r0 + ty, c0 + tx] = acc
