# WRONG: online-softmax expect=mismatch:expected
# The running maximum starts at 0 instead of -inf: for rows of very negative logits every exp(x - 0)
# underflows and the row divides 0 by 0.

import math

import numba
from numba import cuda

TPB = 64


@cuda.jit
def online_softmax_kernel(x, out):
    sm = cuda.shared.array(TPB, numba.float32)
    sd = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]

    # pass 1: this thread's running (max, sum of exp relative to that max)
    m = 0.0
    d = 0.0
    for c in range(t, cols, TPB):
        v = x[r, c]
        m_new = max(m, v)
        d = d * math.exp(m - m_new) + math.exp(v - m_new)
        m = m_new
    sm[t] = m
    sd[t] = d
    cuda.syncthreads()

    # merge the block's pairs; an empty pair (-inf, 0) leaves the other side unchanged
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            m1 = sm[t]
            m2 = sm[t + stride]
            if m1 == -math.inf:
                sm[t] = m2
                sd[t] = sd[t + stride]
            elif m2 != -math.inf:
                m_new = max(m1, m2)
                sd[t] = sd[t] * math.exp(m1 - m_new) + sd[t + stride] * math.exp(m2 - m_new)
                sm[t] = m_new
        cuda.syncthreads()
        stride //= 2
    row_max = sm[0]
    total = sd[0]

    # pass 2: normalise
    for c in range(t, cols, TPB):
        out[r, c] = math.exp(x[r, c] - row_max) / total
