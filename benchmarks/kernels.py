"""The benchmark kernels: plain numba-cuda code, run by gpusim and by numba's CUDA simulator alike."""

import numba
from numba import cuda

SUM_TPB = 256
TILE = 8
BIG_TILE = 16


@cuda.jit
def map_add(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + 10


@cuda.jit
def block_sum(a, out):
    sh = cuda.shared.array(SUM_TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    s = SUM_TPB // 2
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


@cuda.jit
def tiled_matmul(a, b, c):
    sa = cuda.shared.array((TILE, TILE), numba.float32)
    sb = cuda.shared.array((TILE, TILE), numba.float32)
    col, row = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = a.shape[0]
    acc = numba.float32(0.0)
    for k0 in range(0, n, TILE):
        sa[ty, tx] = a[row, k0 + tx] if row < n and k0 + tx < n else 0
        sb[ty, tx] = b[k0 + ty, col] if col < n and k0 + ty < n else 0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        c[row, col] = acc


@cuda.jit
def tiled_matmul_16(a, b, c):
    sa = cuda.shared.array((BIG_TILE, BIG_TILE), numba.float32)
    sb = cuda.shared.array((BIG_TILE, BIG_TILE), numba.float32)
    col, row = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = a.shape[0]
    acc = numba.float32(0.0)
    for k0 in range(0, n, BIG_TILE):
        sa[ty, tx] = a[row, k0 + tx] if row < n and k0 + tx < n else 0
        sb[ty, tx] = b[k0 + ty, col] if col < n and k0 + ty < n else 0
        cuda.syncthreads()
        for k in range(BIG_TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        c[row, col] = acc


@cuda.jit
def naive_matmul(a, b, c):
    col, row = cuda.grid(2)
    n = a.shape[0]
    if row < n and col < n:
        acc = numba.float32(0.0)
        for k in range(n):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc
