# WRONG: argmax expect=mismatch
# Scans with `>=`, so within a lane a later equal value replaces an earlier one: the lane reports the
# last copy of its maximum, not the first.
import math

from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def row_argmax(a, out, rows, cols):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    best = -math.inf
    idx = lane
    if row < rows:
        for j in range(lane, cols, 32):
            v = a[row, j]
            if v >= best:
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
