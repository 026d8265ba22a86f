"""Small kernels that exercise each rule of the Triton back end, with results computed here by NumPy from
CUDA's semantics (not by gpusim, not by the back end).

``python tests/gpusim/triton_kernels.py interpret`` runs each through Triton's interpreter (this process
sets ``TRITON_INTERPRET=1`` before importing triton) and compares; ``aot`` compiles each for sm_90 without
a GPU and passes its arguments through Triton's argument binder (``launcher.check_binding``). It prints
one line per kernel and ``N passed, M failed``, and exits 1 on a failure.
``tests/gpusim/test_triton_backend.py`` runs both in subprocesses.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from numba import cuda, float32, int32

FULL = 0xFFFFFFFF


# -- integer division as Python defines it (floor), negative operands -----------------------------------------
@cuda.jit
def floor_ops(a, b, q, r, q4, r4):
    i = cuda.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        q4[i] = a[i] // 4
        r4[i] = a[i] % 4


def case_floor_ops():
    a = np.array([-7, -8, 7, 0, 5, -1, 9, -13, 12, -3], np.int64)
    b = np.array([2, 3, -2, 5, -5, 3, 4, -4, 7, -1], np.int64)
    outs = [np.zeros(10, np.int64) for _ in range(4)]
    expect = [a // b, a % b, a // 4, a % 4]
    return floor_ops, 2, 8, (a, b, *outs), {2: expect[0], 3: expect[1], 4: expect[2], 5: expect[3]}


@cuda.jit
def float_floor_ops(a, b, q, r):
    i = cuda.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


def case_float_floor_ops():
    a = np.array([-7.5, 7.5, -0.0, 3.0, -3.0, 1e-30, 5.25, -5.25], np.float64)
    b = np.array([2.0, -2.0, 3.0, -1.5, 1.5, -1.0, 0.5, 0.75], np.float64)
    q, r = np.zeros(8), np.zeros(8)
    return float_floor_ops, 1, 8, (a, b, q, r), {2: np.array([x // y for x, y in zip(a, b)]),
                                                3: np.array([x % y for x, y in zip(a, b)])}


# -- a per-lane while loop with break, and continue -------------------------------------------------------------
@cuda.jit
def collatz_steps(start, steps, odd_steps):
    i = cuda.grid(1)
    if i >= start.size:
        return
    x = start[i]
    n = 0
    odd = 0
    while True:
        if x == 1:
            break
        n += 1
        if x % 2 == 0:
            x //= 2
            continue
        odd += 1
        x = 3 * x + 1
    steps[i] = n
    odd_steps[i] = odd


def case_collatz():
    start = np.arange(1, 41, dtype=np.int64)

    def ref(v):
        n = odd = 0
        while v != 1:
            n += 1
            if v % 2 == 0:
                v //= 2
            else:
                odd += 1
                v = 3 * v + 1
        return n, odd

    r = [ref(int(v)) for v in start]
    steps, odd = np.full(40, -1, np.int64), np.full(40, -1, np.int64)
    return collatz_steps, 3, 16, (start, steps, odd), {1: np.array([x[0] for x in r]), 2: np.array([x[1] for x in r])}


# -- device functions: a block-uniform early return, a per-lane return, a tuple result ----------------------------
@cuda.jit(device=True)
def clamp_or_scale(x, n):
    if n <= 1:          # the same for every thread: a block-wide return
        return x
    if x < 0.0:         # per thread
        return 0.0
    return x * n


@cuda.jit(device=True)
def divmod_pair(a, b):
    return a // b, a % b


@cuda.jit
def device_calls(x, n, out, q, r):
    i, j = cuda.grid(2)
    w = out.shape[1]
    if i < out.shape[0] and j < w:
        out[i, j] = clamp_or_scale(x[i, j], n)
        qq, rr = divmod_pair(i * w + j, 3)
        q[i, j] = qq
        r[i, j] = rr


def case_device_calls(n):
    x = (np.arange(30, dtype=np.float32).reshape(5, 6) - 10.0).astype(np.float32)
    out, q, r = np.zeros((5, 6), np.float32), np.zeros((5, 6), np.int64), np.zeros((5, 6), np.int64)
    exp = x.copy() if n <= 1 else np.where(x < 0, np.float32(0), (x.astype(np.float64) * n).astype(np.float32))
    k = np.arange(30).reshape(5, 6)
    return device_calls, (2, 2), (4, 4), (x, n, out, q, r), {2: exp, 3: k // 3, 4: k % 3}


# -- shared memory: a tree reduction in registers, a halo (two store patterns), a store the registers cannot hold --
@cuda.jit
def block_sums(a, out, halo_out, scattered_out):
    s = cuda.shared.array(32, float32)
    h = cuda.shared.array(36, float32)
    z = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 32 + t
    v = a[i] if i < a.size else 0.0
    s[t] = v
    h[t] = v
    if t < 4:
        h[32 + t] = 100.0 + t
    z[(t * 7) % 32] = v           # a permutation: not a fixed plane, so the scratch region holds z
    cuda.syncthreads()
    stride = 16
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]
    if i < a.size:
        halo_out[i] = h[t + 4]
        scattered_out[i] = z[t]


def case_block_sums():
    a = (np.arange(80, dtype=np.float32) * 0.5).astype(np.float32)
    pad = np.zeros(96, np.float32)
    pad[:80] = a
    sums = np.array([np.float32(sum(np.float64(x) for x in pad[32 * b:32 * b + 32])) for b in range(3)], np.float32)
    halo = np.zeros(80, np.float32)
    scat = np.zeros(80, np.float32)
    for i in range(80):
        b, t = divmod(i, 32)
        halo[i] = pad[32 * b + t + 4] if t + 4 < 32 else np.float32(100.0 + (t + 4 - 32))
        src = next(u for u in range(32) if (u * 7) % 32 == t)
        scat[i] = pad[32 * b + src]
    out = (np.zeros(3, np.float32), np.zeros(80, np.float32), np.zeros(80, np.float32))
    return block_sums, 3, 32, (a, *out), {1: sums, 2: halo, 3: scat}


# -- warps: shuffles in a block whose last warp is partial, votes, match -------------------------------------------
@cuda.jit
def warp_ops(a, down, up, xor, idx, bal, anyv, allv, match):
    t = cuda.threadIdx.x
    v = a[t]
    down[t] = cuda.shfl_down_sync(FULL, v, 3)
    up[t] = cuda.shfl_up_sync(FULL, v, 5)
    xor[t] = cuda.shfl_xor_sync(FULL, v, 9)
    idx[t] = cuda.shfl_sync(FULL, v, 7)
    p = v > 20
    bal[t] = cuda.ballot_sync(FULL, p)
    anyv[t] = cuda.any_sync(FULL, v > 45)
    allv[t] = cuda.all_sync(FULL, v >= 0)
    match[t] = cuda.match_any_sync(FULL, v % 3)


def case_warp_ops():
    T = 48
    a = ((np.arange(T) * 7) % 50).astype(np.int32)
    lane = np.arange(T) % 32
    base = np.arange(T) - lane
    size = np.minimum(32, T - base)                # lanes in each thread's warp

    def src(s):
        return np.where((s >= base) & (s < base + size), s, np.arange(T))

    down = a[src(np.where(lane + 3 < 32, np.arange(T) + 3, np.arange(T)))]
    up = a[src(np.where(lane >= 5, np.arange(T) - 5, np.arange(T)))]
    xor = a[src(base + (lane ^ 9))]
    idx = a[src(base + 7)]
    bal = np.zeros(T, np.int64)
    anyv = np.zeros(T, bool)
    allv = np.zeros(T, bool)
    match = np.zeros(T, np.int64)
    for t in range(T):
        w = range(base[t], base[t] + size[t])
        bal[t] = sum(1 << (u - base[t]) for u in w if a[u] > 20)
        anyv[t] = any(a[u] > 45 for u in w)
        allv[t] = all(a[u] >= 0 for u in w)
        match[t] = sum(1 << (u - base[t]) for u in w if a[u] % 3 == a[t] % 3)
    outs = tuple(np.zeros(T, np.int32) for _ in range(4)) + (np.zeros(T, np.int32), np.zeros(T, np.bool_),
                                                              np.zeros(T, np.bool_), np.zeros(T, np.uint32))
    exp = {1: down, 2: up, 3: xor, 4: idx, 5: bal.astype(np.uint32).view(np.int32), 6: anyv, 7: allv,
           8: match.astype(np.uint32)}
    return warp_ops, 1, T, (a, *outs), exp


# -- atomics on global and shared memory, and syncthreads_count -----------------------------------------------------
@cuda.jit
def histograms(x, hist, shared_hist, maxes, counts):
    sh = cuda.shared.array(8, int32)
    t = cuda.threadIdx.x
    if t < 8:
        sh[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    big = 0
    if i < x.size:
        b = x[i] % 8
        cuda.atomic.add(hist, b, 1)
        cuda.atomic.add(sh, b, 1)
        cuda.atomic.max(maxes, b, x[i])
        big = 1 if x[i] > 50 else 0
    n = cuda.syncthreads_count(big)
    if t < 8:
        cuda.atomic.add(shared_hist, t, sh[t])
    if t == 0:
        counts[cuda.blockIdx.x] = n


def case_histograms():
    x = ((np.arange(100) * 37) % 97).astype(np.int32)
    hist = np.bincount(x % 8, minlength=8).astype(np.int32)
    maxes = np.array([x[x % 8 == b].max() for b in range(8)], np.int32)
    counts = np.array([(x[32 * b:32 * b + 32] > 50).sum() for b in range(4)], np.int32)
    outs = (np.zeros(8, np.int32), np.zeros(8, np.int32), np.zeros(8, np.int32), np.zeros(4, np.int32))
    return histograms, 4, 32, (x, *outs), {1: hist, 2: hist, 3: maxes, 4: counts}


# -- a local array, scalars of every kind, -0.0 and NaN through a register shared array ---------------------------
@cuda.jit
def locals_and_scalars(x, out, special, f64, f32, flag, one):
    loc = cuda.local.array(5, float32)
    t = cuda.threadIdx.x
    for k in range(5):
        loc[k] = x[t] * k
    acc = 0.0
    for k in range(4, -1, -1):
        acc += loc[k] * f32
    if flag:
        acc += f64
    out[t] = acc * one
    s = cuda.shared.array(16, float32)
    s[t] = x[t]
    cuda.syncthreads()
    special[t] = s[0] if t % 2 == 0 else s[1]


def case_locals_and_scalars():
    x = np.zeros(16, np.float32)
    x[2:] = np.arange(2, 16, dtype=np.float32)
    x[0], x[1] = np.float32(-0.0), np.float32(np.nan)
    f64, f32 = 0.1, np.float32(1.5)
    exp = np.zeros(16, np.float32)
    for t in range(16):          # small integers and halves: every sum is exact, fused or not
        acc = sum(np.float64(np.float32(x[t] * np.float32(k)) * np.float32(1.5)) for k in range(4, -1, -1))
        exp[t] = np.float32(acc + f64)
    special = np.where(np.arange(16) % 2 == 0, x[0], x[1]).astype(np.float32)
    outs = (np.zeros(16, np.float32), np.zeros(16, np.float32))
    return locals_and_scalars, 1, 16, (x, *outs, f64, f32, True, 1), {1: exp, 2: special}


# -- per-thread arrays: constant indices (registers, loops written out) and an index known at run time (table) --
@cuda.jit
def local_tables(x, n, out, last):
    t = cuda.threadIdx.x
    reg = cuda.local.array((2, 3), int32)    # every index a constant once the loops are written out
    tab = cuda.local.array(4, int32)         # indexed with a per-thread value: a [lanes, 4] table
    i = 0
    j = 0
    for i in range(2):
        for j in range(3):
            reg[i, j] = 0
            if (t + i + j) % 2 == 0:         # a per-lane store into a register element
                reg[i, j] = x[t] * (i + 1) + j
    for k in range(4):
        tab[k] = k * 10
    for k in range(n):
        tab[(t + k) % 4] += x[t]
    s = 0
    for i in range(2):
        for j in range(3):
            s += reg[i, j]
    out[t] = s + tab[t % 4]
    last[t] = i * 10 + j                     # a loop variable keeps its last value


def case_local_tables():
    x = (np.arange(16) * 3 - 7).astype(np.int32)
    n = 5
    out, last = np.zeros(16, np.int32), np.zeros(16, np.int32)
    exp = np.zeros(16, np.int32)
    for t in range(16):
        reg = [[int(x[t]) * (i + 1) + j if (t + i + j) % 2 == 0 else 0 for j in range(3)] for i in range(2)]
        tab = [10 * k for k in range(4)]
        for k in range(n):
            tab[(t + k) % 4] += int(x[t])
        exp[t] = sum(map(sum, reg)) + tab[t % 4]
    return local_tables, 1, 16, (x, n, out, last), {2: exp, 3: np.full(16, 12, np.int32)}


# -- parameters named as Triton's argument binder names its own locals and launch options ---------------------
@cuda.jit
def binder_names(params, backend, options, num_warps, debug, specialization):
    i = cuda.grid(1)
    if i < params.size:
        params[i] = backend[i] * num_warps + debug + options + specialization


def case_binder_names():
    backend = np.arange(10, dtype=np.float32)
    params = np.zeros(10, np.float32)
    return binder_names, 1, 16, (params, backend, 2, 4, 1, 3), {0: backend * 4 + 1 + 2 + 3}


# -- tiled matrix products: a shared-tile inner-product loop becomes one tl.dot (tiles.py) -----------------------
TILE = 16
WIDE = 32
SLICE = 8


@cuda.jit
def tile_products(a, b, bt, out, out_t, out64):
    """``out = a @ b``, ``out_t = a @ bt.T`` and ``out64`` (``a @ b`` summed in float64, numba's ``acc = 0.0``) by
    16 x 16 tiles stored at ``[ty, tx]`` (register planes): ``out`` reads the planes as they lie, ``out_t`` reads
    its b tile transposed (a gather)."""
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    sc = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r = cuda.blockIdx.y * TILE + ty
    c = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    acc_t = float32(0.0)
    acc64 = 0.0
    for t0 in range(0, a.shape[1], TILE):
        sa[ty, tx] = a[r, t0 + tx]
        sb[ty, tx] = b[t0 + ty, c]
        sc[ty, tx] = bt[cuda.blockIdx.x * TILE + ty, t0 + tx]
        cuda.syncthreads()
        for j in range(TILE):
            acc += sa[ty, j] * sb[j, tx]
        for j in range(TILE):
            acc64 += sa[ty, j] * sb[j, tx]
        for j in range(TILE):
            acc_t = acc_t + sc[tx, j] * sa[ty, j]
        cuda.syncthreads()
    out[r, c] = acc
    out_t[r, c] = acc_t
    out64[r, c] = acc64


def case_tile_products():
    rng = np.random.default_rng(7)
    # small integers: every product and partial sum is exact, so any order of the sums gives CUDA's bits
    a = rng.integers(-4, 5, (32, 48)).astype(np.float32)
    b = rng.integers(-4, 5, (48, 32)).astype(np.float32)
    bt = rng.integers(-4, 5, (32, 48)).astype(np.float32)
    outs = (np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float64))
    a64 = a.astype(np.float64)
    expect = {3: (a64 @ b).astype(np.float32), 4: (a64 @ bt.T).astype(np.float32), 5: a64 @ b}
    return tile_products, (2, 2), (TILE, TILE), (a, b, bt, *outs), expect


@cuda.jit
def tile_product_scratch(a, b, out):
    """``out = a @ b`` by 32 x 32 tiles of 8-deep slices stored at computed elements (the scratch region), the
    slice padded to tl.dot's 16; a block's row beyond the matrix is masked as CUDA masks it."""
    sa = cuda.shared.array((WIDE, SLICE), float32)
    sb = cuda.shared.array((SLICE, WIDE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * WIDE + tx
    r = cuda.blockIdx.y * WIDE + ty
    c = cuda.blockIdx.x * WIDE + tx
    acc = float32(0.0)
    for k0 in range(0, a.shape[1], SLICE):
        if t < WIDE * SLICE:
            sa[t // SLICE, t % SLICE] = a[min(cuda.blockIdx.y * WIDE + t // SLICE, a.shape[0] - 1),
                                          k0 + t % SLICE]
        else:
            u = t - WIDE * SLICE
            sb[u // (WIDE), u % (WIDE)] = b[k0 + u // (WIDE), c - tx + u % (WIDE)]
        cuda.syncthreads()
        if r < a.shape[0]:
            for q in range(SLICE):
                acc = cuda.fma(sa[ty, q], sb[q, tx], acc)
        cuda.syncthreads()
    if r < a.shape[0]:
        out[r, c] = acc


def case_tile_product_scratch():
    rng = np.random.default_rng(8)
    a = rng.integers(-4, 5, (40, 24)).astype(np.float32)
    b = rng.integers(-4, 5, (24, 32)).astype(np.float32)
    out = np.zeros((40, 32), np.float32)
    return tile_product_scratch, (1, 2), (WIDE, WIDE), (a, b, out), \
        {2: (a.astype(np.float64) @ b).astype(np.float32)}


# -- a tile stored by rows and read by columns: a window of tl.trans of the stacked planes (views.py) -----------
SIDE = 16
QUARTER = 4
PADDED_SIDE = SIDE + 1
TILE_32 = 32
PADDED_32 = TILE_32 + 1


@cuda.jit
def transpose_quarters(a, out):
    """A 16 x 4 block transposes a 16 x 16 tile (no padding column): four planes of rows ``ty + 4k``, read back
    as ``tile[tx, ty + 4k]`` in a loop of four trips."""
    tile = cuda.shared.array((SIDE, SIDE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * SIDE
    c0 = cuda.blockIdx.x * SIDE
    for row in range(ty, SIDE, QUARTER):    # written out: rows ty, ty + 4, ... are four store patterns
        tile[row, tx] = a[r0 + row, c0 + tx]
    cuda.syncthreads()
    for k in range(SIDE // QUARTER):
        y = ty + k * QUARTER
        out[c0 + y, r0 + tx] = tile[tx, y]


@cuda.jit
def transpose_square(a, out):
    """A 16 x 16 block, one plane of a padded 16 x 17 tile of int32, read back as ``tile[tx, ty]``: the whole
    transposed tile, no window to pick."""
    tile = cuda.shared.array((SIDE, PADDED_SIDE), int32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile[ty, tx] = a[cuda.blockIdx.y * SIDE + ty, cuda.blockIdx.x * SIDE + tx]
    cuda.syncthreads()
    out[cuda.blockIdx.x * SIDE + ty, cuda.blockIdx.y * SIDE + tx] = tile[tx, ty]


@cuda.jit
def transpose_reversed(a, out):
    """The tile of ``transpose_quarters`` read as ``tile[tx, 15 - y]``: its element falls as ``ty`` rises, no
    window of the transpose (the lane-by-lane gathers)."""
    tile = cuda.shared.array((SIDE, SIDE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    for row in range(ty, SIDE, QUARTER):
        tile[row, tx] = a[row, tx]
    cuda.syncthreads()
    for k in range(SIDE // QUARTER):
        y = ty + k * QUARTER
        out[y, tx] = tile[tx, SIDE - 1 - y]


@cuda.jit
def transpose_steps(a, out):
    """One 16 x 16 tile per trip of a loop that stores into it: its transpose is made again each trip (a
    tensor made before the loop would give every trip the first tile)."""
    tile = cuda.shared.array((SIDE, SIDE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    for t in range(3):
        tile[ty, tx] = a[t * SIDE + ty, tx]
        cuda.syncthreads()
        out[ty, t * SIDE + tx] = tile[tx, ty]
        cuda.syncthreads()


def case_transpose_steps():
    a = np.arange(3 * SIDE * SIDE, dtype=np.float32).reshape(3 * SIDE, SIDE)
    expect = np.concatenate([a[t * SIDE:(t + 1) * SIDE].T for t in range(3)], axis=1)
    return transpose_steps, (1,), (SIDE, SIDE), (a, np.zeros((SIDE, 3 * SIDE), np.float32)), {1: expect}


TALL = 32
EIGHTH = 8


@cuda.jit
def transpose_tall(a, out):
    """A 16 x 8 block transposes a 32 x 16 tile (four planes): the window of the transposed tile moves along both
    of its axes, by ``q`` through the tile's rows and by ``k`` through its columns (selects over both)."""
    tile = cuda.shared.array((TALL, SIDE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    for row in range(ty, TALL, EIGHTH):
        tile[row, tx] = a[row, tx]
    cuda.syncthreads()
    for q in range(TALL // SIDE):
        for k in range(SIDE // EIGHTH):
            out[ty + k * EIGHTH, tx + q * SIDE] = tile[tx + q * SIDE, ty + k * EIGHTH]


def case_transpose_tall():
    a = np.arange(TALL * SIDE, dtype=np.float32).reshape(TALL, SIDE) - np.float32(100.25)
    return transpose_tall, (1,), (SIDE, EIGHTH), (a, np.zeros((SIDE, TALL), np.float32)), {1: a.T.copy()}


@cuda.jit
def rows_back(a, out):
    """The tile of ``transpose_quarters`` read back row by row in a loop, ``tile[ty + 4k, tx]`` (each thread's
    own element of plane k: a select, no gather), and one row down, ``tile[ty + 4k + 1, tx]`` (another
    thread's element: gathers)."""
    tile = cuda.shared.array((SIDE, SIDE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    for row in range(ty, SIDE, QUARTER):
        tile[row, tx] = a[row, tx]
    cuda.syncthreads()
    for k in range(SIDE // QUARTER):
        out[0, ty + k * QUARTER, tx] = tile[ty + k * QUARTER, tx] * float32(2)
        if ty + k * QUARTER + 1 < SIDE:
            out[1, ty + k * QUARTER, tx] = tile[ty + k * QUARTER + 1, tx]


def case_rows_back():
    a = np.arange(SIDE * SIDE, dtype=np.float32).reshape(SIDE, SIDE) - np.float32(7.5)
    expect = np.zeros((2, SIDE, SIDE), np.float32)
    expect[0] = a * np.float32(2)
    expect[1, :-1] = a[1:]
    return rows_back, (1,), (SIDE, QUARTER), (a, np.zeros((2, SIDE, SIDE), np.float32)), {1: expect}


STEP = 8


@cuda.jit
def transpose_strided_rows(a, out):
    """A 32 x 8 block, a padded 32 x 33 tile stored in a loop of constant bounds, ``tile[ty + j, tx]`` for
    ``j`` in ``range(0, 32, 8)`` (written out: each ``j`` a store pattern), read back by columns in the same
    kind of loop."""
    tile = cuda.shared.array((TILE_32, PADDED_32), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * TILE_32
    c0 = cuda.blockIdx.x * TILE_32
    for j in range(0, TILE_32, STEP):
        if r0 + ty + j < a.shape[0] and c0 + tx < a.shape[1]:
            tile[ty + j, tx] = a[r0 + ty + j, c0 + tx]
    cuda.syncthreads()
    for j in range(0, TILE_32, STEP):
        if c0 + ty + j < a.shape[1] and r0 + tx < a.shape[0]:
            out[c0 + ty + j, r0 + tx] = tile[tx, ty + j]


def case_transpose_strided_rows():
    a = np.arange(40 * 70, dtype=np.float32).reshape(40, 70) * np.float32(0.25)
    return transpose_strided_rows, (3, 2), (TILE_32, STEP), (a, np.zeros((70, 40), np.float32)), {1: a.T.copy()}


def case_transpose_quarters():
    a = np.arange(32 * 48, dtype=np.float32).reshape(32, 48) * np.float32(0.5) - np.float32(300)
    a[0, 1] = -0.0                       # picked bit for bit: the sign of a zero comes through
    return transpose_quarters, (3, 2), (SIDE, QUARTER), (a, np.zeros((48, 32), np.float32)), {1: a.T.copy()}


def case_transpose_square():
    a = np.arange(-700, 32 * 48 - 700, dtype=np.int32).reshape(32, 48)
    return transpose_square, (3, 2), (SIDE, SIDE), (a, np.zeros((48, 32), np.int32)), {1: a.T.copy()}


def case_transpose_reversed():
    a = np.arange(SIDE * SIDE, dtype=np.float32).reshape(SIDE, SIDE)
    expect = np.empty_like(a)
    for y in range(SIDE):                # out[y, x] = tile[x, 15 - y] = a[x, 15 - y]
        for x in range(SIDE):
            expect[y, x] = a[x, SIDE - 1 - y]
    return transpose_reversed, (1,), (SIDE, QUARTER), (a, np.zeros_like(a)), {1: expect}


CASES = {
    "floor_ops": case_floor_ops,
    "float_floor_ops": case_float_floor_ops,
    "collatz": case_collatz,
    "device_calls_n1": lambda: case_device_calls(1),
    "device_calls_n3": lambda: case_device_calls(3),
    "block_sums": case_block_sums,
    "warp_ops": case_warp_ops,
    "histograms": case_histograms,
    "locals_and_scalars": case_locals_and_scalars,
    "binder_names": case_binder_names,
    "local_tables": case_local_tables,
    "tile_products": case_tile_products,
    "tile_product_scratch": case_tile_product_scratch,
    "transpose_quarters": case_transpose_quarters,
    "transpose_square": case_transpose_square,
    "transpose_reversed": case_transpose_reversed,
    "transpose_steps": case_transpose_steps,
    "transpose_tall": case_transpose_tall,
    "rows_back": case_rows_back,
    "transpose_strided_rows": case_transpose_strided_rows,
}


def program_for(kernel, block, args, guard):
    from gpusim.backends.triton import translate
    from gpusim.frontend.compiler import compile_module
    from gpusim.launch import arg_type

    f = kernel.py_func
    names = f.__code__.co_varnames[:f.__code__.co_argcount]
    module = compile_module(f, tuple(arg_type(v, n) for v, n in zip(args, names)))
    return translate(module, block, guard=guard), names


def bit_equal(got: np.ndarray, exp: np.ndarray) -> bool:
    got, exp = np.asarray(got), np.asarray(exp, dtype=got.dtype)
    if got.dtype.kind == "f":
        return got.shape == exp.shape and bool(np.all((got == exp) | (np.isnan(got) & np.isnan(exp))) and
                                               np.array_equal(np.signbit(got), np.signbit(exp)))
    return np.array_equal(got, exp)


def main(mode: str) -> int:
    if mode == "interpret":
        os.environ["TRITON_INTERPRET"] = "1"
    from gpusim.backends.triton import launcher

    passed = failed = 0
    only = sys.argv[2:]
    for name, make in CASES.items():
        if only and name not in only:
            continue
        kernel, grid, block, args, expect = make()
        args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        try:
            program, names = program_for(kernel, block, args, guard=(mode == "interpret"))
            if mode == "aot":
                launcher.compile_aot(program)
                import torch

                cpu = {n: torch.from_numpy(a) if isinstance(a, np.ndarray) else a for n, a in zip(names, args)}
                launcher.check_binding(program, launcher.bind(program, cpu, grid, "cpu"))
                problems = []
            else:
                launcher.run(program, grid, dict(zip(names, args)), interpret=True)
                problems = [f"{names[k]}: got {args[k].tolist()}, expected {np.asarray(v).tolist()}"
                            for k, v in expect.items() if not bit_equal(args[k], v)]
        except Exception as e:  # a failure to report, not to hide
            problems = [f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"]
        if problems:
            failed += 1
            print(f"FAIL {name}: " + "; ".join(problems)[:2000])
        else:
            passed += 1
            print(f"ok   {name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "interpret"))
