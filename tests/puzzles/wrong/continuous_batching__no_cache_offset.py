# WRONG: continuous-batching expect=mismatch
# Applies the causal mask of a fresh prompt, pos = j, forgetting that the new tokens come after nk - nq
# cached ones: a decode token then sees only the first key of its sequence.
import math

import numba
from numba import cuda

D = 16
TPB = 64


@cuda.jit
def varlen_attention(q, k, v, cu_q, cu_k, scale, out):
    i = cuda.grid(1)
    if i >= q.shape[0]:
        return
    # the sequence b with cu_q[b] <= i < cu_q[b + 1]; start and end track cu_q[lo] and cu_q[hi]
    lo = 0
    hi = cu_q.shape[0] - 1
    start = 0
    end = q.shape[0]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        at = cu_q[mid]
        if at <= i:
            lo = mid
            start = at
        else:
            hi = mid
            end = at
    k0 = cu_k[lo]
    nk = cu_k[lo + 1] - k0
    pos = i - start
    q_row = cuda.local.array(D, numba.float32)
    acc = cuda.local.array(D, numba.float32)
    for c in range(D):
        q_row[c] = q[i, c] * scale
        acc[c] = 0.0
    m = numba.float32(-math.inf)
    l = numba.float32(0.0)
    for t in range(pos + 1):
        s = numba.float32(0.0)
        for c in range(D):
            s += q_row[c] * k[k0 + t, c]
        m_new = max(m, s)
        corr = math.exp(m - m_new)
        p = math.exp(s - m_new)
        l = l * corr + p
        for c in range(D):
            acc[c] = acc[c] * corr + p * v[k0 + t, c]
        m = m_new
    for c in range(D):
        out[i, c] = acc[c] / l
