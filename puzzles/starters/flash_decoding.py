"""Puzzle 74 — Flash-decoding.

out[r] = softmax(scale * k_cache[r, :n] . q[r]) . v_cache[r, :n]   with n = lens[r]  (the rest is NaN).
decode_split, grid (SPLITS, R) of CHUNK threads: block (s, r) takes keys s*CHUNK .. s*CHUNK + CHUNK - 1 of
row r (fewer at the end; none past n: return at once) and writes m_part[r, s] (its max score),
l_part[r, s] (sum of exp(score - max)) and acc_part[r, s, :] (sum of exp(score - max) * v).
decode_combine, grid R of D threads: merge the ceil(n / CHUNK) pieces of row r by rescaling with
exp(m_part - M), then out[r, c] = acc / l.
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array, cuda.syncthreads(), math.exp, math.inf, min, max,
numba.float32. At most 32 reads of k_cache and of v_cache per thread; no atomics; write out once.
"""

import math  # noqa: F401

import numba
from numba import cuda

D = 32       # head dimension
CHUNK = 64   # keys per split = threads per block of decode_split
PADDED = D + 1


@cuda.jit
def decode_split(q, k_cache, v_cache, lens, scale, m_part, l_part, acc_part):
    k_tile = cuda.shared.array((CHUNK, PADDED), numba.float32)
    v_tile = cuda.shared.array((CHUNK, D), numba.float32)
    red = cuda.shared.array(CHUNK, numba.float32)
    p = cuda.shared.array(CHUNK, numba.float32)
    split = cuda.blockIdx.x
    r = cuda.blockIdx.y
    t = cuda.threadIdx.x
    # FILL ME IN (about 45 lines)
    pass


@cuda.jit
def decode_combine(lens, m_part, l_part, acc_part, out):
    r = cuda.blockIdx.x
    c = cuda.threadIdx.x
    # FILL ME IN (about 12 lines)
    pass
