# WRONG: ring-all-reduce expect=mismatch
# The all-gather adds the finished chunk instead of copying it: chunks end up counted twice.

from numba import cuda

TPB = 128


@cuda.jit
def reduce_step(x, left, rank, step, ranks, chunk):
    j = cuda.grid(1)
    c = (rank - 1 - step) % ranks
    i = c * chunk + j
    if j < chunk and i < x.size:
        x[i] += left[i]


@cuda.jit
def gather_step(x, left, rank, step, ranks, chunk):
    j = cuda.grid(1)
    c = (rank - step) % ranks
    i = c * chunk + j
    if j < chunk and i < x.size:
        x[i] += left[i]
