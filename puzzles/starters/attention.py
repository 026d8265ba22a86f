"""Puzzle 43 — Attention (three kernels, launched in this order).

attn_scores:  scores[i, j] = (q[i, :] . k[j, :]) * scale      block (16, 16): x = key j, y = query i
attn_softmax: probs[i, :] = softmax(scores[i, :]), stable       one block of SOFTMAX_TPB threads per row i
attn_pv:      out[i, c] = sum over j of probs[i, j] * v[j, c]  block (16, 16): x = channel c, y = query i
Allowed: cuda.threadIdx / blockIdx / blockDim, cuda.shared.array, cuda.syncthreads(), math.exp, max,
numba.float32, math.inf. Each thread writes each output at most once; no atomics.
"""

import math

import numba
from numba import cuda

D = 16             # head dimension
SOFTMAX_TPB = 64   # threads per softmax block = the most keys a row can have


@cuda.jit
def attn_scores(q, k, scores, scale):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x   # key
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y   # query
    # FILL ME IN (about 5 lines)
    pass


@cuda.jit
def attn_softmax(scores, probs):
    red = cuda.shared.array(SOFTMAX_TPB, numba.float32)
    i = cuda.blockIdx.x
    j = cuda.threadIdx.x
    # FILL ME IN (about 25 lines)
    pass


@cuda.jit
def attn_pv(probs, v, out):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x   # channel
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y   # query
    # FILL ME IN (about 5 lines)
    pass
