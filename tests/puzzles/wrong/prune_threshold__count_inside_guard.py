# WRONG: prune-threshold expect=BarrierDivergence
# Calls syncthreads_count inside `if c < n_cols:`. It is a barrier: in a round where only some threads
# have a column (C = 200: the last round has 8), the others never arrive. On a GPU that hangs or
# miscounts.
from numba import cuda

TPB = 64


@cuda.jit
def prune_rows(w, threshold, pruned, kept):
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n_cols = w.shape[1]
    count = 0
    for c0 in range(0, n_cols, TPB):
        c = c0 + t
        if c < n_cols:
            x = w[row, c]
            keep = 0
            if abs(x) >= threshold:
                keep = 1
            pruned[row, c] = x if keep else 0.0
            count += cuda.syncthreads_count(keep)
    if t == 0:
        kept[row] = count
