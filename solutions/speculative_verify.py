"""Reference solution for puzzle 46 (speculative-verify): one warp per sequence, a ballot finds the first
rejected draft position."""

from numba import cuda

WARP = 32
SEQS = 4


@cuda.jit
def speculative_verify(draft, draft_len, target, accepted, next_token):
    lane = cuda.threadIdx.x
    b = cuda.blockIdx.x * SEQS + cuda.threadIdx.y
    if b < draft.shape[0]:  # a missing sequence's whole warp skips: the full-mask ballot stays valid
        n = draft_len[b]
        rejected = lane < n and draft[b, lane] != target[b, lane]
        mask = cuda.ballot_sync(0xFFFFFFFF, rejected)
        a = n
        if mask != 0:
            a = cuda.ffs(mask) - 1  # the lowest set bit: the first rejected position
        if lane == 0:
            accepted[b] = a
            next_token[b] = target[b, a]
