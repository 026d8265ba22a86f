"""Puzzle 65 — Reduce-scatter.

Rank `rank` of `ranks` runs this once per round, `step` = 0 .. ranks-1. `grads` (ranks * S) is read-only,
`send` (2, S) is its two-slot staging buffer, `left_send` the left neighbour's, `out` (S) its result: the
mean over all ranks of shard `rank`. In round `step` the rank works on shard c = (rank - 1 - step) mod ranks:
  step 0:           send[0]        = grads[shard c]
  middle steps:     send[step % 2] = left_send[(step - 1) % 2] + grads[shard c]
  step ranks - 1:   out            = (left_send[(step - 1) % 2] + grads[shard c]) / ranks     (float32)
"""
import numba  # noqa: F401  (numba.float32 keeps arithmetic in float32)
from numba import cuda

TPB = 128  # threads per block (the launch uses ceil(S / TPB) blocks)


@cuda.jit
def reduce_scatter_step(grads, send, left_send, out, rank, step, ranks):
    j = cuda.grid(1)
    shard = out.size
    # FILL ME IN (about 10 lines)
    pass
