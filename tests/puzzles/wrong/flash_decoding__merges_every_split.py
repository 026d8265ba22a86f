# WRONG: flash-decoding expect=mismatch
# Merges all SPLITS pieces of the row, also those of chunks past its end that no block wrote: their
# scratch entries are still NaN (garbage on a GPU).
import math

import numba
from numba import cuda

D = 32
CHUNK = 64
PADDED = D + 1   # row t, column c of the key tile sits in bank (t + c) % 32


@cuda.jit
def decode_split(q, k_cache, v_cache, lens, scale, m_part, l_part, acc_part):
    k_tile = cuda.shared.array((CHUNK, PADDED), numba.float32)
    v_tile = cuda.shared.array((CHUNK, D), numba.float32)
    red = cuda.shared.array(CHUNK, numba.float32)
    p = cuda.shared.array(CHUNK, numba.float32)
    split = cuda.blockIdx.x
    r = cuda.blockIdx.y
    t = cuda.threadIdx.x
    n = lens[r]
    start = split * CHUNK
    if start >= n:  # no keys in this chunk: the whole block leaves before any barrier
        return
    valid = min(CHUNK, n - start)
    for e in range(t, CHUNK * D, CHUNK):  # consecutive e: consecutive addresses
        j = e // D
        c = e % D
        if j < valid:
            k_tile[j, c] = k_cache[r, start + j, c]
            v_tile[j, c] = v_cache[r, start + j, c]
    cuda.syncthreads()
    s = numba.float32(-math.inf)
    if t < valid:
        dot = numba.float32(0.0)
        for c in range(D):
            dot += q[r, c] * k_tile[t, c]
        s = dot * scale
    # the chunk's maximum
    red[t] = s
    cuda.syncthreads()
    stride = CHUNK // 2
    while stride > 0:
        if t < stride:
            red[t] = max(red[t], red[t + stride])
        cuda.syncthreads()
        stride //= 2
    m = red[0]
    cuda.syncthreads()
    # the chunk's sum of exp(s - m)
    e_t = numba.float32(0.0)
    if t < valid:
        e_t = math.exp(s - m)
    p[t] = e_t
    red[t] = e_t
    cuda.syncthreads()
    stride = CHUNK // 2
    while stride > 0:
        if t < stride:
            red[t] += red[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        m_part[r, split] = m
        l_part[r, split] = red[0]
    # the chunk's unnormalised output, one thread per channel
    if t < D:
        acc = numba.float32(0.0)
        for j in range(valid):
            acc += p[j] * v_tile[j, t]
        acc_part[r, split, t] = acc


@cuda.jit
def decode_combine(lens, m_part, l_part, acc_part, out):
    r = cuda.blockIdx.x
    c = cuda.threadIdx.x
    pieces = m_part.shape[1]
    m = numba.float32(-math.inf)
    for s in range(pieces):
        m = max(m, m_part[r, s])
    l = numba.float32(0.0)
    acc = numba.float32(0.0)
    for s in range(pieces):
        w = math.exp(m_part[r, s] - m)
        l += l_part[r, s] * w
        acc += acc_part[r, s, c] * w
    out[r, c] = acc / l
