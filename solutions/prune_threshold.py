"""Reference solution for puzzle 47 (prune-threshold): one block per row, syncthreads_count for the tally."""

from numba import cuda

TPB = 64


@cuda.jit
def prune_rows(w, threshold, pruned, kept):
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n_cols = w.shape[1]
    count = 0
    for c0 in range(0, n_cols, TPB):  # every thread runs every round: the count below is a barrier
        c = c0 + t
        keep = 0
        if c < n_cols:
            x = w[row, c]
            if abs(x) >= threshold:
                keep = 1
            pruned[row, c] = x if keep else 0.0  # one store for all lanes, not one per branch
        count += cuda.syncthreads_count(keep)
    if t == 0:
        kept[row] = count
