"""Kernels that numba's CUDA simulator runs correctly, for the differential tests (test_differential.py).

Plain numba-cuda code: gpusim runs it in the test process, numba's simulator in a subprocess with
``NUMBA_ENABLE_CUDASIM=1`` (cudasim_runner.py), on the same inputs. Shared arrays are declared one per line
(the simulator aliases two declared on one line) and no warp intrinsics are used (it has none).
"""

from numba import cuda, float32, float64

MAX_TPB = 128
TILE = 4


@cuda.jit
def map_kernel(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] * 3 - 1


@cuda.jit
def zip_guard(a, b, s, n, out):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] + b[i] * s


@cuda.jit
def map_2d(a, out):
    r, c = cuda.grid(2)
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] = a[r, c] * c - r


@cuda.jit
def block_sum(a, out):
    sh = cuda.shared.array(MAX_TPB, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.size:
        sh[t] = a[i]
    else:
        sh[t] = 0.0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


@cuda.jit
def matmul_tiled(a, b, out):
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range((a.shape[1] + TILE - 1) // TILE):
        k = t * TILE
        if row < a.shape[0] and k + tx < a.shape[1]:
            sa[ty, tx] = a[row, k + tx]
        else:
            sa[ty, tx] = 0
        if col < b.shape[1] and k + ty < b.shape[0]:
            sb[ty, tx] = b[k + ty, col]
        else:
            sb[ty, tx] = 0
        cuda.syncthreads()
        for j in range(TILE):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = acc


@cuda.jit
def divergent_loops(a, limit, out):
    i = cuda.grid(1)
    if i >= a.size:
        return
    x = a[i]
    odd = 0
    steps = 0
    while steps < limit:
        steps += 1
        if x <= 1:
            break
        if x % 2 == 0:
            x = x // 2
            continue
        x = 3 * x + 1
        odd += 1
    skipped = 0
    for k in range(i % 5, 12, 2):
        if (k + x) % 3 == 0:
            skipped += 1
            continue
        if k > 9 and odd > 2:
            break
        odd += k
    out[i, 0] = x
    out[i, 1] = odd
    out[i, 2] = steps
    out[i, 3] = skipped


@cuda.jit(device=True)
def clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@cuda.jit(device=True)
def first_at_least(a, v):
    for k in range(a.size):
        if a[k] >= v:
            return k
    return -1


@cuda.jit(device=True)
def weight(k, n):
    if k < 0:
        return 0.0
    return (k + 1) / n


@cuda.jit
def device_functions(x, table, lo, hi, out):
    i = cuda.grid(1)
    if i < x.size:
        c = clamp(x[i], lo, hi)
        k = first_at_least(table, c)
        out[i, 0] = c
        out[i, 1] = k
        out[i, 2] = weight(k, table.size)


@cuda.jit
def histogram(a, nbins, hist, top):
    i = cuda.grid(1)
    if i < a.size:
        v = a[i]
        cuda.atomic.add(hist, v % nbins, 1)
        cuda.atomic.max(top, 0, v)
