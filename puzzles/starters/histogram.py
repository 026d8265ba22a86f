"""Puzzle 25 — Histogram: hist[b] = how many values equal b (0 <= b < BINS); hist starts at 0.

Always BLOCKS blocks of TPB threads; n <= 8192, so each thread walks the array with a grid-stride loop.
You may use: cuda.grid / gridsize / threadIdx, cuda.atomic.add (on global or shared arrays),
cuda.shared.array (at most BINS int32), cuda.syncthreads(), loops, `if`.
★★: coalesced reads; ★★★: at most one global atomic per thread.
"""
import numba
from numba import cuda

BINS = 100   # number of bins
BLOCKS = 4   # blocks in the grid (the launch uses this)
TPB = 128    # threads per block (the launch uses this)


@cuda.jit
def histogram(values, hist, n):
    # FILL ME IN (about 14 lines)
    pass
