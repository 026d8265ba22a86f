# WRONG: cross-entropy expect=mismatch:expected
# The running maximum starts at 0 instead of -inf: right for most rows, but a row whose logits are all far
# below 0 underflows to exp(...) = 0 and its loss becomes inf.

import math

import numba
from numba import cuda

TPB = 64


@cuda.jit
def cross_entropy_kernel(logits, targets, loss):
    sm = cuda.shared.array(TPB, numba.float32)
    ss = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = logits.shape[1]

    m = 0.0
    s = 0.0
    for c in range(t, cols, TPB):
        v = logits[r, c]
        m_new = max(m, v)
        s = s * math.exp(m - m_new) + math.exp(v - m_new)
        m = m_new
    sm[t] = m
    ss[t] = s
    cuda.syncthreads()

    stride = TPB // 2
    while stride > 0:
        if t < stride:
            m1 = sm[t]
            m2 = sm[t + stride]
            if m1 == -math.inf:
                sm[t] = m2
                ss[t] = ss[t + stride]
            elif m2 != -math.inf:
                m_new = max(m1, m2)
                ss[t] = ss[t] * math.exp(m1 - m_new) + ss[t + stride] * math.exp(m2 - m_new)
                sm[t] = m_new
        cuda.syncthreads()
        stride //= 2

    if t == 0:
        loss[r] = sm[0] + math.log(ss[0]) - logits[r, targets[r]]
