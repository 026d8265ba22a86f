# WRONG: spmv-csr expect=mismatch
# Gives each lane a contiguous chunk of the row but computes the chunk size with floor division: the
# last `length % 32` nonzeros of every row are never added.
from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def spmv(indptr, indices, data, x, y, rows):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    if row < rows:
        start = indptr[row]
        chunk = (indptr[row + 1] - start) // 32
        s = 0.0
        for k in range(start + lane * chunk, start + lane * chunk + chunk):
            s += data[k] * x[indices[k]]
        d = 16
        while d > 0:
            s += cuda.shfl_down_sync(FULL_MASK, s, d)
            d //= 2
        if lane == 0:
            y[row] = s
