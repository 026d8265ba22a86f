"""Puzzle 77 — Top-p sampling.

Row b: w_i = exp((logit_i - max) / temperature[b]), Z = sum w_i. In logit order (largest first), the
boundary token is the first whose running sum of w reaches top_p[b] * Z; the nucleus is every token with
a logit >= the boundary's (ties all kept); kept[b] = its size. token[b] = the first nucleus token, in id
order, whose running sum of w exceeds u[b] * (the nucleus's sum of w).
Find the threshold bit by bit: key = bits + 2**31 if bits >= 0 else -1 - bits (bits = logit_bits[b, i],
the logit's 32 bits as int32); for bit 31..0: cand = prefix | (1 << bit); keep cand when the block's sum
of w over key >= cand still reaches top_p * Z.
Launch: one block of TPB = 256 threads per row; thread t owns ids t, t + 256, t + 512, t + 768.
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array (at most 3072 bytes), cuda.local.array,
cuda.syncthreads(), device functions, math.exp, math.inf, numba.float32 / int32 / int64.
At most 4 reads of logits and of logit_bits per thread.
"""

import math  # noqa: F401

import numba
from numba import cuda

V_MAX = 1024
TPB = 256                # threads per block (the launch uses this)
ITEMS = V_MAX // TPB     # logits per thread


@cuda.jit
def top_p_sample(logits, logit_bits, temperature, top_p, u, token, kept):
    red = cuda.shared.array(TPB, numba.float32)
    buf = cuda.shared.array(TPB, numba.float32)
    x = cuda.local.array(ITEMS, numba.float32)
    key = cuda.local.array(ITEMS, numba.int64)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    # FILL ME IN (about 60 lines, with block_sum / block_max / scan device functions)
    pass
