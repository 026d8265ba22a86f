"""Metrics where the compiler changes the instructions: loops NVVM unrolls at run time (gpusim.ir.unroll).

Expected values are ncu's readings on the H200 (graduate --ncu, 2^20 benchmarks: the log of the device run
quoted in docs/metrics.md) and hand counts from the structure of numba-cuda's sm_90 PTX: a loop unrolled by 4
with a remainder loop runs, per warp and access, max over its lanes of (T mod 4) remainder instructions and
4 * max(T div 4) unrolled ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import gpusim
from gpusim.frontend import compile_module
from gpusim.ir.types import Array, Scalar
from gpusim.ir.unroll import Unroll, plan_loops
from solutions.axis_sum import row_sum_kernel
from solutions.prefix_sum import scan_kernel

LD = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
LD_INST = "smsp__sass_inst_executed_op_global_ld.sum"
LD_SECT = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
SH_LD = "smsp__sass_inst_executed_op_shared_ld.sum"
SH_LD_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"


def _metrics(kernel, grid, block, *args):
    return gpusim.launch(kernel, grid, block, args, trace=False).metrics


def test_axis_sum_bench_equals_ncu():
    # ncu on the H200: 52,420 load requests and instructions, 131,050 sectors (5242 rows x 200 columns)
    a = np.random.default_rng(1).standard_normal((5242, 200), dtype=np.float32)
    out = np.zeros(5242, np.float32)
    m = _metrics(row_sum_kernel, 5242, 64, out, a, 200)
    assert (m[LD], m[LD_INST], m[LD_SECT]) == (52_420, 52_420, 131_050)
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-4, atol=1e-4)


def test_axis_sum_hand_count_per_row():
    # 200 columns, 64 threads: lanes 0-7 take 4 trips, the rest 3. Warp 0: 3 remainder + 4 unrolled; warp 1: 3
    a = np.ones((3, 200), np.float32)
    m = _metrics(row_sum_kernel, 3, 64, np.zeros(3, np.float32), a, 200)
    assert m[LD] == 3 * (7 + 3)
    # 256 columns: 4 trips for every lane, one unrolled pass: the engine's iterations (4 per warp)
    a = np.ones((3, 256), np.float32)
    m = _metrics(row_sum_kernel, 3, 64, np.zeros(3, np.float32), a, 256)
    assert m[LD] == 3 * 2 * 4


def test_prefix_sum_equals_ncu_per_warp():
    # ncu at n = 2^20: 1,146,880 shared load instructions = 32,768 warps x 35 (T = t + 1: 4 x 8 unrolled + 3
    # remainder); the broadcast reads s[j] stay one wavefront each
    n = 32 * 64
    a = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    m = _metrics(scan_kernel, n // 32, 32, out, a, n)
    assert m[SH_LD] == 64 * 35 == 1_146_880 // 512
    assert m[SH_LD_WF] == m[SH_LD]
    np.testing.assert_array_equal(out, np.tile(np.arange(1, 33, dtype=np.float32), 64))


@cuda.jit
def _stride_loop(out, a, n):
    t = cuda.threadIdx.x
    acc = 0.0
    for j in range(t, n, 32):          # non-constant start: the remainder runs first (prolog)
        acc += a[j]
    out[t] = acc


@cuda.jit
def _from_zero(out, a, n):
    t = cuda.threadIdx.x
    acc = 0.0
    for j in range(n - t):             # starts at 0: the remainder runs last (epilog)
        acc += a[j * 32 + t]
    out[t] = acc


@cuda.jit
def _with_break(out, a, n):
    t = cuda.threadIdx.x
    acc = 0.0
    for j in range(t, n, 32):
        if a[j] > 100.0:
            break
        acc += a[j]
    out[t] = acc


@cuda.jit
def _uniform_trips(out, a, n):
    t = cuda.threadIdx.x
    acc = 0.0
    for j in range(n):
        acc += a[j * 32 + t]
    out[t] = acc


def test_prolog_regroups_lanes_and_sectors():
    # n = 37 over 32 lanes: lanes 0-4 take 2 trips, 5-31 one. Prolog: remainder r = T mod 4 = T, so both groups
    # are in the remainder loop: slot 0 holds every lane (a[0..31]: 4 sectors), slot 1 lanes 0-4 (a[32..36]: 1)
    m = _metrics(_stride_loop, 1, 32, np.zeros(32, np.float32), np.ones(64, np.float32), 37)
    assert (m[LD], m[LD_SECT]) == (2, 5)
    # n = 32 * 5 + 3: lanes 0-2 take 6 trips (r = 2), lanes 3-31 five (r = 1); one unrolled pass each.
    # Remainder slot 0: every lane, a[0..31]: 4 sectors; slot 1: lanes 0-2, a[32..34]: 1. Unrolled copy k:
    # lanes 3-31 at iteration 1 + k (a[32(k+1) + 3..31]: 4 sectors) with lanes 0-2 at iteration 2 + k
    # (a[32(k+2) + 0..2]: 1 more) -> 5 each. 6 instructions as the engine's 6 iterations, but 25 sectors
    # where the engine's iterations (a[32i .. 32i + 31], then a[160..162]) would give 21
    m = _metrics(_stride_loop, 1, 32, np.zeros(32, np.float32), np.ones(256, np.float32), 163)
    assert (m[LD], m[LD_SECT]) == (6, 4 + 1 + 4 * 5)


def test_epilog_counts_remainder_across_lanes():
    # T = n - t for n = 6: lanes 0-1 take 6 and 5 trips (one unrolled pass), 2-5 take 4..1, lanes 6-31 none.
    # Epilog: unrolled slots 0-3 (lanes with T >= 4), remainder max(T mod 4) = 3 (lane 3: T = 3) -> 7,
    # where the engine's iterations give max(T) = 6
    a = np.ones(6 * 32, np.float32)
    m = _metrics(_from_zero, 1, 32, np.zeros(32, np.float32), a, 6)
    assert m[LD] == 4 + 3


def test_loops_not_unrolled_keep_the_engines_count():
    # a break gives the loop a second exit: not runtime-unrolled (PTX: one load per iteration, no remainder)
    m = _metrics(_with_break, 1, 32, np.zeros(32, np.float32), np.ones(64, np.float32), 37)
    assert m[LD] == 2 * 2
    # the same trip count in every lane: one instruction per iteration either way
    m = _metrics(_uniform_trips, 1, 32, np.zeros(32, np.float32), np.ones(7 * 32, np.float32), 7)
    assert m[LD] == 7


@pytest.mark.parametrize("kernel, plan", [
    (_stride_loop, Unroll(4, False)), (_from_zero, Unroll(4, True)), (_with_break, None),
])
def test_plans(kernel, plan):
    f32 = Array(Scalar("float32"), 1, "C", "global")
    module = compile_module(kernel, (f32, f32, Scalar("int64")))
    assert list(plan_loops(module.entry).values()) == ([plan] if plan else [])
