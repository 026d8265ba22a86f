# WRONG: spmv-csr expect=OutOfBounds
# No `row < rows` guard: with 3 rows the block's 4th warp still reads indptr[3 + 1], past the end.
from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def spmv(indptr, indices, data, x, y, rows):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
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
