# WRONG: stream-compaction expect=mismatch
# Keeps `v >= 0`: zeros are not positive, yet they get packed and counted.
from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def compact(a, out, count, n):
    i = cuda.grid(1)
    v = a[i] if i < n else -1
    keep = v >= 0
    votes = cuda.ballot_sync(FULL_MASK, keep)
    base = i - cuda.laneid
    if keep:
        out[base + cuda.popc(votes & cuda.lanemask_lt())] = v
    if cuda.laneid == 0 and i < n:
        count[i // 32] = cuda.popc(votes)
