# WRONG: top-k-sampling expect=constraint:shared-memory loads per row
# A rank sort: each thread counts, for each of its two slots, how many of the 1,024 slots belong before
# it, and writes the id to that rank. Correct, and every thread is busy, but it is V^2 work — 16,384
# warp-level shared loads per row where the bitonic network needs 3,520.
import math

import numba
from numba import cuda

V_MAX = 1024
TPB = 512
K_MAX = 32
FULL = 0xFFFFFFFF


@cuda.jit
def top_k_sample(logits, top_k, temperature, u, topk_ids, token):
    vals = cuda.shared.array(V_MAX, numba.float32)
    ids = cuda.shared.array(V_MAX, numba.int32)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    vocab = logits.shape[1]
    for i in range(t, V_MAX, TPB):
        if i < vocab:
            vals[i] = logits[b, i]
        else:
            vals[i] = -math.inf
    cuda.syncthreads()
    v0 = vals[t]
    v1 = vals[t + TPB]
    r0 = 0
    r1 = 0
    for j in range(V_MAX):
        x = vals[j]
        if x > v0 or (x == v0 and j < t):
            r0 += 1
        if x > v1 or (x == v1 and j < t + TPB):
            r1 += 1
    ids[r0] = t
    ids[r1] = t + TPB
    cuda.syncthreads()
    if t < K_MAX:
        k = top_k[b]
        top = vals[ids[0]]
        w = numba.float32(0.0)
        if t < k:
            w = math.exp((vals[ids[t]] - top) / temperature[b])
        c = w
        off = 1
        while off < K_MAX:
            y = cuda.shfl_up_sync(FULL, c, off)
            if t >= off:
                c += y
            off *= 2
        total = cuda.shfl_sync(FULL, c, k - 1)
        hit = cuda.ballot_sync(FULL, t < k and c > u[b] * total)
        if t < k:
            topk_ids[b, t] = ids[t]
        else:
            topk_ids[b, t] = -1
        if t == 0:
            token[b] = ids[cuda.ffs(hit) - 1]
