# WRONG: argmax expect=mismatch
# Starts each lane from best = 0 at column 0: in a row of negative numbers nothing beats 0, so the answer
# is column 0 whatever the row holds.
from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def row_argmax(a, out, rows, cols):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    if row < rows:
        best = 0.0
        idx = 0
        for j in range(lane, cols, 32):
            v = a[row, j]
            if v > best:
                best = v
                idx = j
        d = 16
        while d > 0:
            ov = cuda.shfl_down_sync(FULL_MASK, best, d)
            oi = cuda.shfl_down_sync(FULL_MASK, idx, d)
            if ov > best or (ov == best and oi < idx):
                best = ov
                idx = oi
            d //= 2
        if lane == 0:
            out[row] = idx
