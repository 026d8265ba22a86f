# WRONG: multi-block-scan expect=constraint:`block_sums`
# Launch 2 scans nothing; launch 3 sums the earlier tile totals in a loop instead. The output is right,
# but a thread of the last block reads block_sums 31 times: the work launch 2 should have shared.
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
    return  # "launch 3 can add the totals up itself"


@cuda.jit
def add_offsets(out, block_sums, n):
    b = cuda.blockIdx.x
    i = b * TPB + cuda.threadIdx.x
    if i < n:
        offset = 0
        for j in range(b):
            offset += block_sums[j]
        out[i] += offset
