# WRONG: paged-attention expect=mismatch:expected
# Idle threads put 0 into the max reduction instead of -inf: rows of very negative scores underflow.

import math

import numba
from numba import cuda

D = 16
PAGE = 8
TPB = 64


@cuda.jit
def paged_attention(q, k_cache, v_cache, block_table, seq_lens, out, scale):
    red = cuda.shared.array(TPB, numba.float32)
    probs = cuda.shared.array(TPB, numba.float32)
    pages = cuda.shared.array(TPB, numba.int32)   # the physical page of each token, looked up once
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = seq_lens[b]
    # 1. the score of token t, found through the block table
    s = numba.float32(0.0)
    if t < n:
        page = block_table[b, t // PAGE]
        pages[t] = page
        dot = numba.float32(0.0)
        for c in range(D):
            dot += q[b, c] * k_cache[page, t % PAGE, c]
        s = numba.float32(dot * scale)
    # 2. stable softmax over the block: tree max, then tree sum
    red[t] = s
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            red[t] = max(red[t], red[t + stride])
        cuda.syncthreads()
        stride //= 2
    m = red[0]
    cuda.syncthreads()
    e = numba.float32(0.0)
    if t < n:
        e = math.exp(s - m)
    red[t] = e
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            red[t] += red[t + stride]
        cuda.syncthreads()
        stride //= 2
    probs[t] = e / red[0]
    cuda.syncthreads()
    # 3. one thread per channel: the probability-weighted sum of the values
    if t < D:
        acc = numba.float32(0.0)
        for j in range(n):
            acc += probs[j] * v_cache[pages[j], j % PAGE, t]
        out[b, t] = acc
