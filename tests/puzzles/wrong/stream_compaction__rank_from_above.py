# WRONG: stream-compaction expect=mismatch
# Ranks each kept lane by the kept lanes *above* it (shifting the ballot right): the values are packed,
# but in reverse order.
from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def compact(a, out, count, n):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = a[i] if i < n else 0
    keep = v > 0
    votes = cuda.ballot_sync(FULL_MASK, keep)
    base = i - lane
    if keep:
        out[base + cuda.popc(votes >> (lane + 1))] = v
    if lane == 0 and i < n:
        count[i // 32] = cuda.popc(votes)
