"""Puzzle 47 — Magnitude pruning.

pruned[r, c] = w[r, c] if abs(w[r, c]) >= threshold else 0;  kept[r] = how many weights of row r survive.
One block of TPB threads per row; rows may be longer or shorter than the block.
Allowed: cuda.threadIdx / blockIdx, cuda.syncthreads_count(int), cuda.shared.array, cuda.syncthreads(),
abs. One thread writes kept[r].
"""

from numba import cuda

TPB = 64  # threads per block (the launch uses this)


@cuda.jit
def prune_rows(w, threshold, pruned, kept):
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    # FILL ME IN (about 12 lines)
    pass
