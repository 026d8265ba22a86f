"""Puzzle 79 — Speculative sampling.

Sequence b (one block), draft x_i = draft[b, i], i < G: position i is accepted when
u_accept[b, i] < p_probs[b, i, x_i] / q_probs[b, i, x_i]; accepted[b] = a = the first refused position
(G if none). Then draw next_token[b] from r = max(0, p_probs[b, a] - q_probs[b, a]) if a < G, else from
r = p_probs[b, G]: the first token t whose running sum of r exceeds u_sample[b] * sum(r).
Launch: one block of TPB = 512 threads per sequence; thread t owns token t (V <= 512).
Allowed: cuda.threadIdx / blockIdx, cuda.shared.array, cuda.syncthreads(), cuda.ballot_sync, cuda.ffs,
max, numba.float32 / int32. At most 4 reads of p_probs and q_probs per thread; write each output once.
"""

import numba
from numba import cuda

TPB = 512   # threads per block = the largest vocabulary (the launch uses this)
FULL = 0xFFFFFFFF


@cuda.jit
def speculative_sample(draft, q_probs, p_probs, u_accept, u_sample, accepted, next_token):
    buf = cuda.shared.array(TPB, numba.float32)
    first = cuda.shared.array(1, numba.int32)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    # FILL ME IN (about 35 lines)
    pass
