# WRONG: matmul-double-buffer expect=constraint:barriers for 16 slices
# Two buffers, but puzzle 50's second barrier kept: every step waits before its prefetch as well as after its
# multiply-adds. Right answers, no race, two buffers -- and 2 x 16 + 1 = 33 barriers per block for k = 128,
# where the pipeline needs 16 + 1.
import numba
from numba import cuda

BM = 64
BN = 64
BK = 8
TM = 8


@cuda.jit(device=True)
def load_slices(a, b, sa, sb, buf, k0, r0, c0, tx, ty):
    """Thread (tx, ty) copies one value of the a slice and one of the b slice at k0 into buffer `buf`."""
    m, k = a.shape
    n = b.shape[1]
    t = ty * BN + tx
    i = t // BK
    q = t % BK
    if r0 + i < m and k0 + q < k:
        sa[buf, i, q] = a[r0 + i, k0 + q]
    else:
        sa[buf, i, q] = 0.0
    if k0 + ty < k and c0 + tx < n:
        sb[buf, ty, tx] = b[k0 + ty, c0 + tx]
    else:
        sb[buf, ty, tx] = 0.0


@cuda.jit
def matmul_double_buffered(a, b, c):
    sa = cuda.shared.array((2, BM, BK), numba.float32)
    sb = cuda.shared.array((2, BK, BN), numba.float32)
    acc = cuda.local.array(TM, numba.float32)
    m, k = a.shape
    n = b.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * BM
    c0 = cuda.blockIdx.x * BN
    for i in range(TM):
        acc[i] = 0.0
    steps = (k + BK - 1) // BK
    load_slices(a, b, sa, sb, 0, 0, r0, c0, tx, ty)
    cuda.syncthreads()
    for s in range(steps):
        cur = s % 2
        cuda.syncthreads()     # the single-buffer habit: a second barrier before the prefetch
        if s + 1 < steps:
            load_slices(a, b, sa, sb, 1 - cur, (s + 1) * BK, r0, c0, tx, ty)
        for q in range(BK):
            bv = sb[cur, q, tx]
            for i in range(TM):
                acc[i] += sa[cur, ty * TM + i, q] * bv
        cuda.syncthreads()
    for i in range(TM):
        r = r0 + ty * TM + i
        if r < m and c0 + tx < n:
            c[r, c0 + tx] = acc[i]
