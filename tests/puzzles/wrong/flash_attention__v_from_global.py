# WRONG: flash-attention expect=constraint:reads `v`
# Right numbers, but only K goes through shared memory: every thread reads the values straight from
# global memory, so V is fetched once per query row (up to 1024 reads of v per thread) instead of
# once per block of 32 rows (32 per thread).
import math

import numba
from numba import cuda

D = 16
BR = 32
BC = 16


@cuda.jit
def flash_attention(q, k, v, out, scale):
    k_tile = cuda.shared.array((BC, D), numba.float32)
    q_row = cuda.local.array(D, numba.float32)
    acc = cuda.local.array(D, numba.float32)
    s = cuda.local.array(BC, numba.float32)
    t = cuda.threadIdx.x
    row = cuda.blockIdx.x * BR + t
    n_q = q.shape[0]
    n_k = k.shape[0]
    if row < n_q:
        for c in range(D):
            q_row[c] = q[row, c] * scale
    for c in range(D):
        acc[c] = 0.0
    m = numba.float32(-math.inf)
    l = numba.float32(0.0)
    for k0 in range(0, n_k, BC):
        for e in range(t, BC * D, BR):  # consecutive e: consecutive addresses of k and v
            j = k0 + e // D
            if j < n_k:
                k_tile[e // D, e % D] = k[j, e % D]
        cuda.syncthreads()
        if row < n_q:
            n_valid = min(BC, n_k - k0)
            m_new = m
            for jj in range(n_valid):
                dot = numba.float32(0.0)
                for c in range(D):
                    dot += q_row[c] * k_tile[jj, c]
                s[jj] = dot
                m_new = max(m_new, dot)
            corr = math.exp(m - m_new)  # 0 on the first tile, where m = -inf
            l *= corr
            for c in range(D):
                acc[c] *= corr
            for jj in range(n_valid):
                p = math.exp(s[jj] - m_new)
                l += p
                for c in range(D):
                    acc[c] += p * v[k0 + jj, c]
            m = m_new
        cuda.syncthreads()
    if row < n_q:
        for c in range(D):
            out[row, c] = acc[c] / l
