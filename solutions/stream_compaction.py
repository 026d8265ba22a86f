"""Reference solution — puzzle 23, Stream compaction in a warp: ballot, then count the kept lanes below."""
from numba import cuda

TPB = 128
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def compact(a, out, count, n):
    i = cuda.grid(1)
    v = a[i] if i < n else 0
    keep = v > 0
    votes = cuda.ballot_sync(FULL_MASK, keep)
    base = i - cuda.laneid                      # the warp's first slot
    if keep:
        out[base + cuda.popc(votes & cuda.lanemask_lt())] = v
    if cuda.laneid == 0 and i < n:
        count[i // 32] = cuda.popc(votes)
