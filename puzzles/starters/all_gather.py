"""Puzzle 66 — All-gather, both ways round the ring.

Rank `rank` of `ranks` runs this once per round, `step` = 0 .. ranks-2. `out` (ranks, S) is its own buffer
(row `rank` holds its shard at the start), `left` and `right` are its neighbours' `out`. Thread j copies
column j of one row: the first S // 2 columns travel clockwise (read from `left`), the rest counter-clockwise
(read from `right`). In round `step` the rank receives the row its neighbour received the round before.
"""
from numba import cuda

TPB = 128  # threads per block (the launch uses ceil(S / TPB) blocks)


@cuda.jit
def gather_step(out, left, right, rank, step, ranks):
    j = cuda.grid(1)
    shard = out.shape[1]
    # FILL ME IN (about 8 lines)
    pass
