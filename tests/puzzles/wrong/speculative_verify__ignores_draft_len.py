# WRONG: speculative-verify expect=mismatch
# Compares every position of the draft buffer, not just the first draft_len. Past the draft the buffer
# holds stale tokens; where the first of them equals the target's bonus token, the draft is stretched.
from numba import cuda

WARP = 32
SEQS = 4


@cuda.jit
def speculative_verify(draft, draft_len, target, accepted, next_token):
    lane = cuda.threadIdx.x
    b = cuda.blockIdx.x * SEQS + cuda.threadIdx.y
    if b < draft.shape[0]:
        g = draft.shape[1]
        rejected = lane < g and draft[b, lane] != target[b, lane]
        mask = cuda.ballot_sync(0xFFFFFFFF, rejected)
        a = g
        if mask != 0:
            a = cuda.ffs(mask) - 1
        if lane == 0:
            accepted[b] = a
            next_token[b] = target[b, a]
