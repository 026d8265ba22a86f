"""Puzzle 75 — Continuous batching.

Sequence b has new tokens q[cu_q[b] .. cu_q[b+1]-1] (nq) and keys k[cu_k[b] .. cu_k[b+1]-1] (nk >= nq).
Its new token j is at position pos = nk - nq + j and attends to its keys 0 .. pos:
    out[i] = softmax_t(scale * q[i] . k[cu_k[b] + t]) . v[cu_k[b] + t]     for t = 0 .. pos
Thread i = cuda.grid(1) owns packed token i (skip i >= q.shape[0]); find b with a binary search on cu_q.
Allowed: cuda.grid, cuda.local.array, math.exp, math.inf, min, max, numba.float32, while / for loops.
Read q[i] once, cu_k at most twice, each key and value once; write out[i] once; no atomics.
"""

import math  # noqa: F401

import numba
from numba import cuda

D = 16     # head dimension
TPB = 64   # threads per block (the launch uses this)


@cuda.jit
def varlen_attention(q, k, v, cu_q, cu_k, scale, out):
    i = cuda.grid(1)
    q_row = cuda.local.array(D, numba.float32)
    acc = cuda.local.array(D, numba.float32)
    # FILL ME IN (about 35 lines)
    pass
