# WRONG: flash-decoding expect=constraint:reads of `k_cache`
# Puzzle 44's plan: block 0 of each row walks all of the row's keys, chunk after chunk, with an online
# softmax, and the other blocks do nothing. Correct, but a thread then reads up to 16 chunks of the cache:
# the work of a row is no longer spread over the GPU.
import math

import numba
from numba import cuda

D = 32
CHUNK = 64
PADDED = D + 1


@cuda.jit
def decode_split(q, k_cache, v_cache, lens, scale, m_part, l_part, acc_part):
    k_tile = cuda.shared.array((CHUNK, PADDED), numba.float32)
    v_tile = cuda.shared.array((CHUNK, D), numba.float32)
    red = cuda.shared.array(CHUNK, numba.float32)
    p = cuda.shared.array(CHUNK, numba.float32)
    r = cuda.blockIdx.y
    t = cuda.threadIdx.x
    if cuda.blockIdx.x != 0:
        return
    n = lens[r]
    m_run = numba.float32(-math.inf)
    l_run = numba.float32(0.0)
    acc = numba.float32(0.0)
    for start in range(0, n, CHUNK):
        valid = min(CHUNK, n - start)
        for e in range(t, CHUNK * D, CHUNK):
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
        red[t] = s
        cuda.syncthreads()
        stride = CHUNK // 2
        while stride > 0:
            if t < stride:
                red[t] = max(red[t], red[t + stride])
            cuda.syncthreads()
            stride //= 2
        m_new = max(m_run, red[0])
        cuda.syncthreads()
        e_t = numba.float32(0.0)
        if t < valid:
            e_t = math.exp(s - m_new)
        p[t] = e_t
        red[t] = e_t
        cuda.syncthreads()
        stride = CHUNK // 2
        while stride > 0:
            if t < stride:
                red[t] += red[t + stride]
            cuda.syncthreads()
            stride //= 2
        corr = math.exp(m_run - m_new)
        l_run = l_run * corr + red[0]
        if t < D:
            acc *= corr
            for j in range(valid):
                acc += p[j] * v_tile[j, t]
        m_run = m_new
        cuda.syncthreads()
    if t == 0:
        m_part[r, 0] = m_run
        l_part[r, 0] = l_run
    if t < D:
        acc_part[r, 0, t] = acc


@cuda.jit
def decode_combine(lens, m_part, l_part, acc_part, out):
    r = cuda.blockIdx.x
    c = cuda.threadIdx.x
    out[r, c] = acc_part[r, 0, c] / l_part[r, 0]
