# WRONG: attention expect=DataRace
# Reuses the shared array for the sum right after reading the maximum, with no barrier between:
# thread 0 may overwrite red[0] with its exp before a slower thread has read red[0] as the maximum.

import math

import numba
from numba import cuda

D = 16
SOFTMAX_TPB = 64


@cuda.jit
def attn_scores(q, k, scores, scale):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x   # key
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y   # query
    if i < q.shape[0] and j < k.shape[0]:
        dot = numba.float32(0.0)
        for c in range(D):
            dot += q[i, c] * k[j, c]
        scores[i, j] = dot * scale


@cuda.jit
def attn_softmax(scores, probs):
    red = cuda.shared.array(SOFTMAX_TPB, numba.float32)
    i = cuda.blockIdx.x
    j = cuda.threadIdx.x
    n_keys = scores.shape[1]
    s = numba.float32(-math.inf)
    if j < n_keys:
        s = scores[i, j]
    red[j] = s
    cuda.syncthreads()
    stride = SOFTMAX_TPB // 2
    while stride > 0:
        if j < stride:
            red[j] = max(red[j], red[j + stride])
        cuda.syncthreads()
        stride //= 2
    row_max = red[0]
    e = numba.float32(0.0)
    if j < n_keys:
        e = math.exp(s - row_max)
    red[j] = e
    cuda.syncthreads()
    stride = SOFTMAX_TPB // 2
    while stride > 0:
        if j < stride:
            red[j] += red[j + stride]
        cuda.syncthreads()
        stride //= 2
    if j < n_keys:
        probs[i, j] = e / red[0]


@cuda.jit
def attn_pv(probs, v, out):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x   # channel
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y   # query
    if i < probs.shape[0] and c < D:
        acc = numba.float32(0.0)
        for j in range(probs.shape[1]):
            acc += probs[i, j] * v[j, c]
        out[i, c] = acc
