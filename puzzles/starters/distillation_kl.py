"""Puzzle 80 — Distillation loss.

Row b, T = temperature: log_p_s = log_softmax(student[b] / T), log_p_t = log_softmax(teacher[b] / T),
p_t = exp(log_p_t), p_s = exp(log_p_s);
    loss[b] = T * T * sum_i p_t[i] * (log_p_t[i] - log_p_s[i])
    grad[b, i] = T * (p_s[i] - p_t[i])
log_softmax(x) = x - m - log(sum exp(x - m)), m = max x: never take the log of a probability.
Launch: one block of TPB = 128 threads per row; thread t owns columns t, t + 128, ... (V <= 1024).
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array, cuda.local.array, cuda.syncthreads(), device
functions, math.exp / log / inf, max, numba.float32. Write each output element once; no atomics.
"""

import math  # noqa: F401

import numba
from numba import cuda

TPB = 128
V_MAX = 1024
ITEMS = V_MAX // TPB   # columns per thread


@cuda.jit
def distill_kl(student, teacher, temperature, loss, grad):
    red = cuda.shared.array(TPB, numba.float32)
    s = cuda.local.array(ITEMS, numba.float32)
    tt = cuda.local.array(ITEMS, numba.float32)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    # FILL ME IN (about 40 lines, with block_max / block_sum device functions)
    pass
