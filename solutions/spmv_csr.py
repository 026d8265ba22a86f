"""Reference solution — puzzle 26, CSR SpMV: one warp per row, lanes stride through the row's nonzeros."""
from numba import cuda

TPB = 128
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def spmv(indptr, indices, data, x, y, rows):
    row = cuda.grid(1) // 32          # the same for all 32 lanes of a warp
    lane = cuda.laneid
    if row < rows:
        start = indptr[row]
        end = indptr[row + 1]
        s = 0.0
        for k in range(start + lane, end, 32):
            s += data[k] * x[indices[k]]
        d = 16
        while d > 0:
            s += cuda.shfl_down_sync(FULL_MASK, s, d)
            d //= 2
        if lane == 0:
            y[row] = s
