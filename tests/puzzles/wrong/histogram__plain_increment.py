# WRONG: histogram expect=DataRace
# `hist[v] += 1` without an atomic: two threads with the same value read the same count and both
# write count + 1, losing one.
from numba import cuda


@cuda.jit
def histogram(values, hist, n):
    i = cuda.grid(1)
    while i < n:
        hist[values[i]] += 1
        i += cuda.gridsize(1)
