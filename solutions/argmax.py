"""Reference solution — puzzle 27, Row argmax: per-lane scan, then a shuffle reduction over (value, column)
pairs whose combine step breaks ties towards the lower column."""
import math

from numba import cuda

TPB = 128
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def row_argmax(a, out, rows, cols):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    best = -math.inf
    idx = lane                    # a lane without columns keeps idx >= cols: it loses every tie
    if row < rows:
        if lane < cols:
            best = a[row, lane]       # taken unconditionally, so a row of -inf still answers its column
        for j in range(lane + 32, cols, 32):
            v = a[row, j]
            if v > best:              # strict: the first (lowest) column of equal values stays
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
