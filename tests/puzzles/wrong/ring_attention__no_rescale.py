# WRONG: ring-attention expect=mismatch
# Forgets to rescale the running output by exp(m_old - m_new) when a block brings a larger score.

import math

import numba
from numba import cuda

D = 16
R_MAX = 16


@cuda.jit
def attend_block(q, kv, slot, m, l, acc, out, scale, step, steps):
    q_t = cuda.shared.array((R_MAX, D), numba.float32)
    k_t = cuda.shared.array((R_MAX, D), numba.float32)
    v_t = cuda.shared.array((R_MAX, D), numba.float32)
    s_t = cuda.shared.array((R_MAX, R_MAX), numba.float32)
    x = cuda.threadIdx.x
    y = cuda.threadIdx.y
    keys = kv.shape[2]
    live = y < q.shape[0]
    if live:
        q_t[y, x] = q[y, x]
        k_t[y, x] = kv[slot, 0, y, x]
        v_t[y, x] = kv[slot, 1, y, x]
    cuda.syncthreads()
    m_old = numba.float32(0.0)
    l_old = numba.float32(0.0)
    if live:
        m_old = m[y]
        l_old = l[y]
        if x < keys:
            dot = numba.float32(0.0)
            for c in range(D):
                dot += q_t[y, c] * k_t[x, c]
            s_t[y, x] = dot * scale
    cuda.syncthreads()
    if live:
        m_new = m_old
        for j in range(keys):
            m_new = max(m_new, s_t[y, j])
        corr = math.exp(m_old - m_new)  # 0 in the first round, where m_old = -inf
        total = l_old * corr
        a = acc[y, x]
        for j in range(keys):
            p = math.exp(s_t[y, j] - m_new)
            total += p
            a += p * v_t[j, x]
        acc[y, x] = a
        if x == 0:
            m[y] = m_new
            l[y] = total
        if step == steps - 1:
            out[y, x] = a / total


@cuda.jit
def pass_block(kv, left_kv, slot):
    e = cuda.grid(1)
    rows = kv.shape[2]
    if e < 2 * rows * D:
        which = e // (rows * D)
        r = e // D % rows
        c = e % D
        kv[(slot + 1) % 2, which, r, c] = left_kv[slot, which, r, c]
