"""Reference solution for puzzle 76 (top-k-sampling): a bitonic sort of (logit, id) pairs in shared memory,
then warp 0 scans the k best weights and a ballot finds the sampled one."""

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
            vals[i] = -math.inf   # padding sorts last
        ids[i] = i
    cuda.syncthreads()
    size = 2
    while size <= V_MAX:
        stride = size // 2
        while stride > 0:
            i = 2 * stride * (t // stride) + t % stride
            j = i + stride
            vi = vals[i]
            vj = vals[j]
            ii = ids[i]
            ij = ids[j]
            j_first = vj > vi or (vj == vi and ij < ii)
            descending = (i & size) == 0
            if j_first == descending:
                vals[i] = vj
                vals[j] = vi
                ids[i] = ij
                ids[j] = ii
            cuda.syncthreads()
            stride //= 2
        size *= 2
    if t < K_MAX:  # warp 0 samples among the k best
        k = top_k[b]
        w = numba.float32(0.0)
        if t < k:
            w = math.exp((vals[t] - vals[0]) / temperature[b])
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
