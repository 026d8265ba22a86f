# WRONG: ring-all-reduce expect=OutOfBounds
# Only `j < chunk` is checked: the last chunk is shorter than `chunk`, its threads run past the end.

from numba import cuda

TPB = 128


@cuda.jit
def reduce_step(x, left, rank, step, ranks, chunk):
    j = cuda.grid(1)
    c = (rank - 1 - step) % ranks
    i = c * chunk + j
    if j < chunk:
        x[i] += left[i]


@cuda.jit
def gather_step(x, left, rank, step, ranks, chunk):
    j = cuda.grid(1)
    c = (rank - step) % ranks
    i = c * chunk + j
    if j < chunk and i < x.size:
        x[i] = left[i]
