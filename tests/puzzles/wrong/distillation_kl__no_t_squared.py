# WRONG: distillation-kl expect=mismatch
# Returns the plain KL divergence: without the factor T^2 the loss (and so its gradient) shrinks as the
# temperature grows, by 16x at T = 4.
import math

import numba
from numba import cuda

TPB = 128
V_MAX = 1024
ITEMS = V_MAX // TPB


@cuda.jit(device=True)
def block_max(red, x, t):
    red[t] = x
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            red[t] = max(red[t], red[t + stride])
        cuda.syncthreads()
        stride //= 2
    top = red[0]
    cuda.syncthreads()  # red is reused by the next reduction
    return top


@cuda.jit(device=True)
def block_sum(red, x, t):
    red[t] = x
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            red[t] += red[t + stride]
        cuda.syncthreads()
        stride //= 2
    total = red[0]
    cuda.syncthreads()
    return total


@cuda.jit
def distill_kl(student, teacher, temperature, loss, grad):
    red = cuda.shared.array(TPB, numba.float32)
    s = cuda.local.array(ITEMS, numba.float32)
    tt = cuda.local.array(ITEMS, numba.float32)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    vocab = student.shape[1]
    temp = temperature
    ms = numba.float32(-math.inf)
    mt = numba.float32(-math.inf)
    for r in range(ITEMS):
        i = r * TPB + t
        s[r] = -math.inf
        tt[r] = -math.inf
        if i < vocab:
            s[r] = student[b, i] / temp
            tt[r] = teacher[b, i] / temp
            ms = max(ms, s[r])
            mt = max(mt, tt[r])
    ms = block_max(red, ms, t)
    mt = block_max(red, mt, t)
    zs = numba.float32(0.0)
    zt = numba.float32(0.0)
    for r in range(ITEMS):
        if r * TPB + t < vocab:
            zs += math.exp(s[r] - ms)
            zt += math.exp(tt[r] - mt)
    lse_s = ms + math.log(block_sum(red, zs, t))
    lse_t = mt + math.log(block_sum(red, zt, t))
    kl = numba.float32(0.0)
    for r in range(ITEMS):
        i = r * TPB + t
        if i < vocab:
            ls = s[r] - lse_s
            lt = tt[r] - lse_t
            pt = math.exp(lt)  # may underflow to 0: the term below is then 0, not NaN
            kl += pt * (lt - ls)
            grad[b, i] = temp * (math.exp(ls) - pt)
    kl = block_sum(red, kl, t)
    if t == 0:
        loss[b] = kl
