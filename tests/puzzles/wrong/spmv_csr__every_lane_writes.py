# WRONG: spmv-csr expect=DataRace
# After an xor butterfly every lane holds the row's total, and every lane stores it: 32 threads write
# y[row] with nothing ordering them (same value today — a write-after-write race all the same).
from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def spmv(indptr, indices, data, x, y, rows):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    if row < rows:
        s = 0.0
        for k in range(indptr[row] + lane, indptr[row + 1], 32):
            s += data[k] * x[indices[k]]
        d = 16
        while d > 0:
            s += cuda.shfl_xor_sync(FULL_MASK, s, d)
            d //= 2
        y[row] = s
