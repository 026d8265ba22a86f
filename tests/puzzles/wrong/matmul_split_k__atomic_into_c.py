# WRONG: matmul-split-k expect=constraint:atomic
# Accumulates every slice into part[0] with atomics and copies part[0] to c: one workspace instead of S,
# but the order in which blocks arrive decides the bits, so a GPU gives different outputs from run to
# run (and part[0] starts as NaN, not 0).
import numba
from numba import cuda

TILE = 32
BK = 16
HALF = TILE * BK   # 512 threads load the slice of a, the other 512 the slice of b


@cuda.jit
def matmul_partial(a, b, part, slice_k):
    sa = cuda.shared.array((TILE, BK), numba.float32)
    sb = cuda.shared.array((BK, TILE), numba.float32)
    m, k = a.shape
    n = b.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * TILE + tx
    r0 = cuda.blockIdx.y * TILE
    c0 = cuda.blockIdx.x * TILE
    z = cuda.blockIdx.z
    lo = z * slice_k
    hi = min(k, lo + slice_k)
    acc = numba.float32(0.0)
    for k0 in range(lo, hi, BK):
        if t < HALF:
            i = t // BK
            q = t % BK
            if r0 + i < m and k0 + q < hi:
                sa[i, q] = a[r0 + i, k0 + q]
            else:
                sa[i, q] = 0.0
        else:
            u = t - HALF
            q = u // TILE
            j = u % TILE
            if k0 + q < hi and c0 + j < n:
                sb[q, j] = b[k0 + q, c0 + j]
            else:
                sb[q, j] = 0.0
        cuda.syncthreads()
        for q in range(BK):
            acc += sa[ty, q] * sb[q, tx]
        cuda.syncthreads()
    if r0 + ty < m and c0 + tx < n:
        cuda.atomic.add(part, (0, r0 + ty, c0 + tx), acc)


@cuda.jit
def sum_slices(part, c):
    s, m, n = part.shape
    t = cuda.grid(1)
    if t < m * n:
        r = t // n
        j = t % n
        acc = numba.float32(0.0)
        c[r, j] = part[0, r, j]
