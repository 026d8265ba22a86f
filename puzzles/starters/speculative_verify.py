"""Puzzle 46 — Speculative decoding: verify the drafts.

For sequence b with n = draft_len[b]: accepted[b] = the first i < n with draft[b, i] != target[b, i]
(or n if none), next_token[b] = target[b, accepted[b]].
Block (WARP, SEQS): threadIdx.y picks the sequence b = blockIdx.x * SEQS + threadIdx.y, threadIdx.x is the
lane = the draft position it checks.
Allowed: cuda.threadIdx / blockIdx, cuda.ballot_sync, cuda.ffs, cuda.popc, comparisons. One lane writes
each output; no atomics.
"""

from numba import cuda

WARP = 32  # lanes per sequence (the launch uses blocks of (WARP, SEQS))
SEQS = 4   # sequences per block


@cuda.jit
def speculative_verify(draft, draft_len, target, accepted, next_token):
    lane = cuda.threadIdx.x
    b = cuda.blockIdx.x * SEQS + cuda.threadIdx.y
    # FILL ME IN (about 10 lines)
    pass
