# WRONG: ring-all-reduce expect=DataRace
# The chunk index forgets the rank: every rank works on chunk `step`, so rank d reads its left
# neighbour's chunk while that neighbour adds into the very same chunk, in the same step.

from numba import cuda

TPB = 128


@cuda.jit
def reduce_step(x, left, rank, step, ranks, chunk):
    j = cuda.grid(1)
    c = step % ranks
    i = c * chunk + j
    if j < chunk and i < x.size:
        x[i] += left[i]


@cuda.jit
def gather_step(x, left, rank, step, ranks, chunk):
    j = cuda.grid(1)
    c = (rank - step) % ranks
    i = c * chunk + j
    if j < chunk and i < x.size:
        x[i] = left[i]
