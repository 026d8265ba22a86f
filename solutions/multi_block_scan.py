"""Reference solution for puzzle 30 (multi-block-scan): scan tiles, scan the tile totals, add the offsets."""

import numba
from numba import cuda

TPB = 32


@cuda.jit(device=True)
def block_scan(buf, t):
    """Inclusive Hillis-Steele scan of row 0 of the (2, TPB) shared `buf`; returns the row with the result."""
    src = 0
    offset = 1
    while offset < TPB:
        v = buf[src, t]
        if t >= offset:
            v += buf[src, t - offset]
        buf[1 - src, t] = v
        cuda.syncthreads()
        src = 1 - src
        offset *= 2
    return src


@cuda.jit
def scan_blocks(a, out, block_sums, n):
    buf = cuda.shared.array((2, TPB), numba.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        buf[0, t] = a[i]
    else:
        buf[0, t] = 0
    cuda.syncthreads()
    src = block_scan(buf, t)
    if i < n:
        out[i] = buf[src, t]
    if t == TPB - 1:
        block_sums[cuda.blockIdx.x] = buf[src, t]


@cuda.jit
def scan_block_sums(block_sums, num_blocks):
    buf = cuda.shared.array((2, TPB), numba.int32)
    t = cuda.threadIdx.x
    if t < num_blocks:
        buf[0, t] = block_sums[t]
    else:
        buf[0, t] = 0
    cuda.syncthreads()
    src = block_scan(buf, t)
    if t < num_blocks:
        block_sums[t] = buf[src, t]


@cuda.jit
def add_offsets(out, block_sums, n):
    b = cuda.blockIdx.x
    i = b * TPB + cuda.threadIdx.x
    if b > 0 and i < n:
        out[i] += block_sums[b - 1]
