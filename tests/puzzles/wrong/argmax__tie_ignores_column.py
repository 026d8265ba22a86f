# WRONG: argmax expect=mismatch
# The combine step takes the other candidate only when its value is strictly larger: on a tie each lane
# keeps its own column, which is not always the lower one (lane 8 may hold column 40 and lane 3 column 3).
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
        if lane < cols:
            best = a[row, lane]
        for j in range(lane + 32, cols, 32):
            v = a[row, j]
            if v > best:
                best = v
                idx = j
        d = 16
        while d > 0:
            ov = cuda.shfl_down_sync(FULL_MASK, best, d)
            oi = cuda.shfl_down_sync(FULL_MASK, idx, d)
            if ov > best:
                best = ov
                idx = oi
            d //= 2
        if lane == 0:
            out[row] = idx
