"""Reference solution for puzzle 66 (all-gather): first halves clockwise from the left neighbour, second
halves counter-clockwise from the right one."""

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
        r = (rank + 1 + step) % ranks
        out[r, j] = right[r, j]
