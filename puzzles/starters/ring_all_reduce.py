"""Puzzle 64 — Ring all-reduce.

Rank `rank` of `ranks` runs these once per step; `x` is its own vector, `left` its left neighbour's
(rank - 1, read over the link). Chunks have `chunk` elements (the last may be short or empty); thread
j = cuda.grid(1) handles element j of the step's chunk.
  reduce_step, steps 0 .. ranks-2:  chunk c = (rank - 1 - step) mod ranks,  x[chunk c] += left[chunk c]
  gather_step, steps 0 .. ranks-2:  chunk c = (rank - step) mod ranks,      x[chunk c]  = left[chunk c]
"""
from numba import cuda

TPB = 128  # threads per block (the launch uses ceil(chunk / TPB) blocks)


@cuda.jit
def reduce_step(x, left, rank, step, ranks, chunk):
    j = cuda.grid(1)
    # FILL ME IN (about 4 lines)
    pass


@cuda.jit
def gather_step(x, left, rank, step, ranks, chunk):
    j = cuda.grid(1)
    # FILL ME IN (about 4 lines)
    pass
