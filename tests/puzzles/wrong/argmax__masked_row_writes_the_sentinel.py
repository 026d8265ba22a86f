# WRONG: argmax expect=mismatch:a thread wrote -1 here, the value the buffer started with
# Starts each lane at idx = -1 and takes a column only when it beats -inf: in a row that is all -inf (fully
# masked logits) no column ever does, so lane 0 writes -1, which is also what `out` starts with. The message
# must say a thread wrote it, not that nobody did.
import math

from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def row_argmax(a, out, rows, cols):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    if row < rows:
        best = -math.inf
        idx = -1
        for j in range(lane, cols, 32):
            v = a[row, j]
            if v > best:
                best = v
                idx = j
        d = 16
        while d > 0:
            ov = cuda.shfl_down_sync(FULL_MASK, best, d)
            oi = cuda.shfl_down_sync(FULL_MASK, idx, d)
            if ov > best or (ov == best and oi >= 0 and (idx < 0 or oi < idx)):
                best = ov
                idx = oi
            d //= 2
        if lane == 0:
            out[row] = idx
