"""Puzzle 45 — Paged attention (one decode step).

For sequence b (one block) with n = seq_lens[b] cached tokens: token t lives in
k_cache[block_table[b, t // PAGE], t % PAGE, :] (and the same place of v_cache).
out[b] = sum over t < n of softmax_t(scale * q[b] . k[token t]) * v[token t].
Thread t owns token t. Unused cache slots are NaN and unused block-table entries are -1: read only
tokens t < n.
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array, cuda.syncthreads(), math.exp, math.inf, max,
numba.float32 / numba.int32. Write each output once; no atomics.
"""

import math

import numba
from numba import cuda

D = 16     # head dimension
PAGE = 8   # tokens per page
TPB = 64   # threads per block = the most tokens a sequence can have (the launch uses this)


@cuda.jit
def paged_attention(q, k_cache, v_cache, block_table, seq_lens, out, scale):
    red = cuda.shared.array(TPB, numba.float32)
    probs = cuda.shared.array(TPB, numba.float32)
    pages = cuda.shared.array(TPB, numba.int32)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = seq_lens[b]
    # FILL ME IN (about 38 lines)
    pass
