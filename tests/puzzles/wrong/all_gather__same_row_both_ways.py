# WRONG: all-gather expect=mismatch
# The counter-clockwise half uses the clockwise row: the right neighbour does not have that half yet.

from numba import cuda

TPB = 128


@cuda.jit
def gather_step(out, left, right, rank, step, ranks):
    j = cuda.grid(1)
    shard = out.shape[1]
    if j >= shard:
        return
    if j < shard // 2:
        r = (rank - 1 - step) % ranks
        out[r, j] = left[r, j]
    else:
        r = (rank - 1 - step) % ranks
        out[r, j] = right[r, j]
