"""Puzzle 26 — CSR sparse matrix times vector: y[r] = sum of data[k] * x[indices[k]] over row r's nonzeros
k = indptr[r] .. indptr[r+1] - 1.

Blocks of TPB threads; warp w of the grid computes row w (warps past the last row do nothing).
You may use: cuda.grid(1), cuda.laneid, for-range / while loops, `if`, cuda.shfl_down_sync /
shfl_xor_sync (mask 0xffffffff). Write y[row] once; no atomics.
★★: spread each row over the lanes of its warp; ★★★: combine the lanes with shuffles, no shared memory.
"""
from numba import cuda

TPB = 128                # threads per block = 4 warps = 4 rows (the launch uses this)
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def spmv(indptr, indices, data, x, y, rows):
    # FILL ME IN (about 14 lines)
    pass
