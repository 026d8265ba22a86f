# WRONG: speculative-verify expect=mismatch
# Counts every matching position (popc of the match mask) instead of the matching *prefix*: a draft
# token that agrees again after a rejection is counted as accepted, though it was conditioned on a
# token the target never chose.
from numba import cuda

WARP = 32
SEQS = 4


@cuda.jit
def speculative_verify(draft, draft_len, target, accepted, next_token):
    lane = cuda.threadIdx.x
    b = cuda.blockIdx.x * SEQS + cuda.threadIdx.y
    if b < draft.shape[0]:
        n = draft_len[b]
        match = lane < n and draft[b, lane] == target[b, lane]
        a = cuda.popc(cuda.ballot_sync(0xFFFFFFFF, match))
        if lane == 0:
            accepted[b] = a
            next_token[b] = target[b, a]
