"""Reference solution for puzzle 42 (sparse-24-gemv): x staged in shared memory, one warp per row."""

import numba
from numba import cuda

TPB_X = 32
ROWS = 4
K_MAX = 128


@cuda.jit
def sparse24_gemv(values, meta, x, y):
    xs = cuda.shared.array(K_MAX, numba.float32)
    partial = cuda.shared.array((ROWS, TPB_X), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.x * ROWS + ty
    n_rows = values.shape[0]
    k_total = x.shape[0]
    # every thread of the block helps stage x, whether or not its row exists
    for k in range(ty * TPB_X + tx, k_total, TPB_X * ROWS):
        xs[k] = x[k]
    cuda.syncthreads()
    acc = numba.float32(0.0)
    if row < n_rows:
        for j in range(tx, values.shape[1], TPB_X):
            g = j // 2
            pos = (meta[row, g] >> (2 * (j % 2))) & 3
            acc += values[row, j] * xs[4 * g + pos]
    partial[ty, tx] = acc
    cuda.syncthreads()
    stride = TPB_X // 2
    while stride > 0:
        if tx < stride:
            partial[ty, tx] += partial[ty, tx + stride]
        cuda.syncthreads()
        stride //= 2
    if tx == 0 and row < n_rows:
        y[row] = partial[ty, 0]
