"""Puzzle 76 — Top-k sampling.

Row b: sort the logits, largest first (equal logits: lower id first); topk_ids[b, :k] = the first
k = top_k[b] ids, topk_ids[b, k:] = -1. Weights w_j = exp((logit_j - logit_0) / temperature[b]) for j < k,
running sums c_j; token[b] = topk_ids[b, j] for the first j with c_j > u[b] * c_(k-1).
Launch: one block of TPB = 512 threads per row. Sort V_MAX = 1024 slots (pad with -inf) with a bitonic
network in shared memory; warp 0 samples.
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array (at most 8192 bytes), cuda.syncthreads(),
cuda.shfl_up_sync, cuda.shfl_sync, cuda.ballot_sync, cuda.ffs, math.exp, math.inf, numba.float32 /
numba.int32. Read each logit once; no atomics.
"""

import math  # noqa: F401

import numba
from numba import cuda

V_MAX = 1024   # slots of the sort
TPB = 512      # threads per block (the launch uses this)
K_MAX = 32     # the largest k = one warp
FULL = 0xFFFFFFFF


@cuda.jit
def top_k_sample(logits, top_k, temperature, u, topk_ids, token):
    vals = cuda.shared.array(V_MAX, numba.float32)
    ids = cuda.shared.array(V_MAX, numba.int32)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    # FILL ME IN (about 45 lines)
    pass
