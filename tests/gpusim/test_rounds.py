"""Latency rounds (gpusim/observe/rounds.py): what a warp waits for one after another, counted by hand."""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

import gpusim

F32 = np.float32


def rounds(kernel, grid, block, args, shared=0):
    m = gpusim.launch(kernel, grid, block, args, shared_mem=shared, trace=False).metrics
    return {k.removeprefix("gpusim__"): m[k] for k in m if k.startswith("gpusim__") and
            any(w in k for w in ("rounds", "barriers", "atomic_max", "shared_atomic"))}


@cuda.jit
def grid_stride(alpha, x, y, out, n):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        out[i] = alpha * x[i] + y[i]
        i += step


@cuda.jit
def four_then_store(a, out):
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * 4 * cuda.blockDim.x + t
    v = cuda.local.array(4, numba.float32)
    for k in range(4):
        v[k] = a[base + k * cuda.blockDim.x]
    for k in range(4):
        out[base + k * cuda.blockDim.x] = v[k]


@cuda.jit
def row_sum(x, out):
    r = cuda.blockIdx.x
    acc = F32(0)
    for c in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):
        acc += x[r, c]
    out[r, cuda.threadIdx.x] = acc


@cuda.jit
def row_max(x, out):
    best = -math.inf
    for c in range(cuda.threadIdx.x, x.shape[1], 32):
        v = x[cuda.blockIdx.x, c]
        if v > best:                  # a compare: nothing gpusim sees uses the load
            best = v
    out[cuda.blockIdx.x, cuda.threadIdx.x] = best


@cuda.jit
def tile_rows(a, out):
    tile = cuda.shared.array((4, 32), numba.float32)
    t = cuda.threadIdx.x
    for y in range(4):
        tile[y, t] = a[y * 32 + t]           # the shared store waits for the load before the next row's load
    cuda.syncthreads()
    out[t] = tile[0, t] + tile[3, t]


@cuda.jit
def tree(a, out):
    s = cuda.shared.array(128, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    stride = 64
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def serial_thread0(a, out):
    acc = F32(0)
    if cuda.threadIdx.x == 0:
        for j in range(10):
            acc += a[j]
        out[cuda.blockIdx.x] = acc


@cuda.jit
def shared_hist(values, hist):
    sh = cuda.shared.array(4, numba.int32)
    t = cuda.threadIdx.x
    if t < 4:
        sh[t] = 0
    cuda.syncthreads()
    cuda.atomic.add(sh, values[cuda.grid(1)], 1)
    cuda.syncthreads()
    if t < 4:
        cuda.atomic.add(hist, t, sh[t])


def test_a_grid_stride_loop_waits_once_per_iteration_behind_its_store():
    n = 1 << 14
    x = np.ones(n, F32)
    got = rounds(grid_stride, 8, 256, (F32(2), x, x.copy(), np.zeros_like(x), n))
    # 2,048 threads, 8 iterations each; x and y are loaded together; the store to out (which might be x or
    # y) keeps the next iteration's loads behind it
    assert got["rounds_dram_sum"] == 8 * 8 and got["rounds_dram_max"] == 8
    assert got["rounds_l2_sum"] == 0 and got["barriers_sum"] == 0


def test_loads_issued_before_any_use_share_one_round():
    a = np.ones(4 * 1024, F32)
    got = rounds(four_then_store, 4, 256, (a, np.zeros_like(a)))
    assert got["rounds_dram_sum"] == 4 and got["rounds_dram_max"] == 1


def test_a_reduction_loop_waits_once_per_unrolled_body():
    x = np.ones((3, 256), F32)
    got = rounds(row_sum, 3, 32, (x, np.zeros((3, 32), F32)))
    # 256 columns / 32 threads = 8 iterations; the adds do not stop the next loads of an unrolled body (4)
    assert got["rounds_dram_max"] == 2 and got["rounds_dram_sum"] == 3 * 2


def test_a_loop_with_no_visible_use_waits_once_per_unrolled_body_and_per_remainder_trip():
    x = np.ones((2, 32 * 10), F32)
    got = rounds(row_max, 2, 32, (x, np.zeros((2, 32), F32)))
    # 10 trips, unrolled by 4 with the 2 left over first (sm_90 SASS of this kernel, numba-cuda 0.30.4: a
    # loop of one LDG, then four LDG in a row): 2 single trips, then two bodies of 4 -> 4 rounds
    assert got["rounds_dram_max"] == 4 and got["rounds_dram_sum"] == 2 * 4


def test_a_loop_of_two_trips_waits_twice():
    x = np.ones((3, 64), F32)
    got = rounds(row_sum, 3, 32, (x, np.zeros((3, 32), F32)))
    # 64 columns / 32 threads = 2 trips, both in the remainder loop (puzzle 42's loop: LDG LDG LDS FFMA
    # per trip in its SASS): each waits for its load
    assert got["rounds_dram_max"] == 2 and got["rounds_dram_sum"] == 3 * 2


@cuda.jit
def ragged(x, out, n):
    t = cuda.threadIdx.x
    acc = F32(0)
    for k in range(n + t % 2):          # starts at 0: LLVM puts the remainder after the unrolled body
        acc += x[k * 32 + t]
    out[t] = acc


def test_an_epilog_remainder_waits_once_per_trip_of_the_warps_longest_lane():
    got = rounds(ragged, 1, 32, (np.ones(6 * 32, F32), np.zeros(32, F32), 5))
    # lanes of 5 and 6 trips; the SASS: a body of 4 LDG, then a loop of one LDG: one wait for the body, then
    # the remainder loop runs 2 trips for the warp
    assert got["rounds_dram_max"] + got["rounds_l2_max"] == 3


@cuda.jit
def running_sum(a, out):
    s = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    acc = F32(0)
    for j in range(t + 1):               # puzzle 12's loop: lane t runs t + 1 trips
        acc += s[j]
    out[t] = acc


def test_a_warp_of_ragged_trips_waits_for_every_pass_and_every_remainder_trip():
    got = rounds(running_sum, 1, 32, (np.ones(32, F32), np.zeros(32, F32)))
    # trips 1..32 in one warp, unrolled by 4 with the remainder last (SASS: 4 LDS per pass, then a loop of one
    # LDS): max(T div 4) = 8 passes and max(T mod 4) = 3 remainder trips
    assert got["rounds_shared_max"] == 8 + 3


def test_a_tile_loaded_through_shared_memory_waits_once_per_row():
    got = rounds(tile_rows, 1, 32, (np.ones(128, F32), np.zeros(32, F32)))
    assert got["rounds_dram_max"] == 4
    # after the barrier: tile[0, t] and tile[3, t] are loaded together
    assert got["rounds_shared_max"] == 1


def test_a_tree_reduction_counts_its_barriers_and_shared_rounds():
    a = np.ones(2 * 128, F32)
    got = rounds(tree, 2, 128, (a, np.zeros(2, F32)))
    # one barrier after the fill, one per halving (64, 32, 16, 8, 4, 2, 1): 8 per block
    assert got["barriers_sum"] == 2 * 8 and got["barriers_max"] == 8
    # warp 0 reads shared memory at every halving (7 rounds) and once more for s[0]
    assert got["rounds_shared_max"] == 8 and got["rounds_shared_sum"] == 2 * 8
    assert got["rounds_dram_sum"] == 2


def test_a_block_lasts_as_long_as_its_slowest_warp():
    a = np.ones(10, F32)
    got = rounds(serial_thread0, 5, 128, (a, np.zeros(5, F32)))
    # only warp 0 works: 10 loads of one line, in rounds of 4, 4 and 2. a[0..9] is one 64-byte segment:
    # the first round of every block (all five run together) goes to DRAM, the other two find it on chip
    assert (got["rounds_dram_max"], got["rounds_l2_max"]) == (1, 2)
    assert (got["rounds_dram_sum"], got["rounds_l2_sum"]) == (5, 5 * 2)


def test_shared_atomics_pass_once_per_lane_on_the_busiest_address():
    values = np.repeat(np.arange(4, dtype=np.int32), 16)       # each warp: lanes 0-15 on bin k, 16-31 on k+1
    got = rounds(shared_hist, 1, 64, (values, np.zeros(4, np.int32)))
    # two requests, each with 16 lanes on each of two addresses: 16 passes each
    assert got["shared_atomic_passes"] == 2 * 16
    # the merge: bin t gets one atomic from thread t, so no address gets more than one
    assert got["atomic_max_per_address"] == 1


@cuda.jit
def stride_hist(values, hist, n):
    sh = cuda.shared.array(4, numba.int32)
    t = cuda.threadIdx.x
    if t < 4:
        sh[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    while i < n:
        cuda.atomic.add(sh, values[i], 1)     # the atomic needs the load; the next load waits behind it
        i += cuda.gridsize(1)
    cuda.syncthreads()
    if t < 4:
        cuda.atomic.add(hist, t, sh[t])


def test_an_atomic_keeps_the_next_load_behind_it():
    n = 64 * 12
    values = (np.arange(n) % 4).astype(np.int32)
    got = rounds(stride_hist, 1, 64, (values, np.zeros(4, np.int32), n))
    assert got["rounds_dram_max"] == 12 and got["rounds_dram_sum"] == 12
