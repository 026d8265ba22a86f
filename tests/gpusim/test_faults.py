"""Faults a thread can hit at run time: each found deterministically, located, and described in one sentence."""

from __future__ import annotations

import time

import numba
import numpy as np
import pytest
from numba import cuda
from simkit import faults, line_of, one_fault, run, run_clean

import gpusim
from gpusim import (
    BarrierDivergence,
    KernelError,
    KernelTimeout,
    LaunchError,
    OutOfBounds,
    UninitializedRead,
    UnsupportedConstruct,
)

# ---------------------------------------------------------------------------------------------- OutOfBounds


@cuda.jit
def matrix_copy_unguarded_cols(a, out):
    r, c = cuda.grid(2)
    if r < out.shape[0]:
        out[r, c] = a[r, c]


def test_a_column_past_the_end_is_caught_even_when_the_flat_address_is_valid():
    # 4x6 matrix, 8 columns of threads: out[r, 6] would land inside row r+1 on a GPU
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = np.zeros_like(a)
    report = run(matrix_copy_unguarded_cols, 1, (4, 8), a, out)
    read, write = faults(report, OutOfBounds)
    assert len(report.faults) == 2
    for f, name, access in ((read, "a", "read"), (write, "out", "write")):
        assert f.access == access and f.array == name and f.index == (0, 6)
        assert f.thread == (0, 6, 0) and f.block == (0, 0, 0)
        assert f.lineno == line_of(matrix_copy_unguarded_cols, "out[r, c] = a[r, c]")
        assert "dimension 1" in f.summary and "(size 6)" in f.summary
        assert f.count == 8          # threads (r, 6) and (r, 7) for 4 rows
    np.testing.assert_array_equal(out, a)    # the in-bounds lanes still ran


@cuda.jit
def guarded(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * 2
    j = i if i < a.size else -1
    if j >= 0:
        out[j] += 1


def test_an_index_that_is_out_of_bounds_only_on_masked_off_lanes_is_fine():
    a = np.arange(50, dtype=np.float32)
    out = np.zeros_like(a)
    run_clean(guarded, 2, 32, a, out)
    np.testing.assert_array_equal(out, a * 2 + 1)


@cuda.jit
def neighbour(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i - 1] + a[i]


def test_a_negative_index_is_out_of_bounds_not_wrapped():
    a = np.arange(8, dtype=np.float32)
    out = np.zeros_like(a)
    f = one_fault(run(neighbour, 1, 8, a, out), OutOfBounds)
    assert f.index == (-1,) and f.thread == (0, 0, 0) and f.access == "read"
    assert f.summary.startswith("Negative index -1 is out of bounds for dimension 0 of global array 'a'")


@cuda.jit
def write_past_end(out):
    i = cuda.grid(1)
    out[i] = i


def test_writes_out_of_bounds_are_caught_in_the_first_offending_thread():
    out = np.zeros(40, np.int64)
    f = one_fault(run(write_past_end, 2, 32, out), OutOfBounds)
    assert f.access == "write" and f.index == (40,) and f.block == (1, 0, 0) and f.thread == (8, 0, 0)
    assert f.count == 24
    np.testing.assert_array_equal(out, np.arange(40))


@cuda.jit
def first_dim_oob(out):
    r, c = cuda.grid(2)
    out[r, c] = 1


def test_the_first_dimension_is_checked_too():
    out = np.zeros((3, 4), np.int64)
    f = one_fault(run(first_dim_oob, 1, (4, 4), out), OutOfBounds)
    assert f.index == (3, 0) and "dimension 0" in f.summary and f.access == "write"


@cuda.jit
def shared_and_local_oob(out, k):
    sh = cuda.shared.array(8, numba.float32)
    lo = cuda.local.array(4, numba.int32)
    t = cuda.threadIdx.x
    sh[t] = t
    for j in range(4):
        lo[j] = t + j
    cuda.syncthreads()
    out[t] = sh[t] + lo[k]


def test_shared_and_local_arrays_are_bounds_checked():
    out = np.zeros(8, np.float32)
    report = run(shared_and_local_oob, 1, 9, np.zeros(9, np.float32), 4)
    kinds = {(f.array, f.index) for f in faults(report, OutOfBounds)}
    assert ("sh", (8,)) in kinds and ("lo", (4,)) in kinds
    report = run(shared_and_local_oob, 1, 8, out, 1)
    assert not report.faults


# ---------------------------------------------------------------------------------------------- BarrierDivergence


@cuda.jit
def barrier_in_branch(out):
    t = cuda.threadIdx.x
    if t < 40:
        cuda.syncthreads()
    out[t] = t


def test_syncthreads_in_a_divergent_branch():
    out = np.zeros(64, np.int64)
    f = one_fault(run(barrier_in_branch, 1, 64, out), BarrierDivergence)
    assert f.lineno == line_of(barrier_in_branch, "cuda.syncthreads()")
    assert "40 of the block's 64" in f.summary
    assert f.block == (0, 0, 0) and f.thread == (0, 0, 0)
    assert any("thread (40, 0, 0)" in d for d in f.details)


@cuda.jit
def barrier_after_early_return(a, out):
    sh = cuda.shared.array(64, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if i >= a.size:
        return
    sh[t] = a[i]
    cuda.syncthreads()
    out[i] = sh[t] + sh[0]


def test_a_barrier_after_some_threads_returned_is_fine():
    a = np.arange(100, dtype=np.float32)
    out = np.zeros_like(a)
    run_clean(barrier_after_early_return, 2, 64, a, out)
    np.testing.assert_array_equal(out, a + np.repeat([0.0, 64.0], 64)[:100])


@cuda.jit
def barrier_in_per_thread_loop(out):
    t = cuda.threadIdx.x
    for _k in range(t % 3):
        cuda.syncthreads()
    out[t] = t


def test_a_barrier_in_a_loop_with_a_per_thread_trip_count():
    f = one_fault(run(barrier_in_per_thread_loop, 1, 32, np.zeros(32, np.int64)), BarrierDivergence)
    assert f.lineno == line_of(barrier_in_per_thread_loop, "cuda.syncthreads()")


@cuda.jit
def barrier_in_uniform_branch(out, n):
    t = cuda.threadIdx.x
    if n > 2:
        cuda.syncthreads()
    for _k in range(n):
        cuda.syncthreads()
    out[t] = t


def test_barriers_under_uniform_control_flow_are_fine():
    out = np.zeros(48, np.int64)
    run_clean(barrier_in_uniform_branch, 1, 48, out, 3)
    np.testing.assert_array_equal(out, np.arange(48))


@cuda.jit
def barrier_under_block_uniform_control(out):
    sh = cuda.shared.array(32, numba.int64)
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    sh[t] = 0
    cuda.syncthreads()
    if b % 2 == 0:                # the same in every thread of a block
        sh[t] = b
        cuda.syncthreads()
    for _k in range(b):           # a trip count per block, not per thread
        cuda.syncthreads()
        sh[t] += 1
    cuda.syncthreads()
    out[b, t] = sh[(t + 1) % 32]


def test_barriers_in_branches_and_loops_that_are_uniform_per_block_are_fine():
    out = np.zeros((4, 32), np.int64)
    run_clean(barrier_under_block_uniform_control, 4, 32, out)
    np.testing.assert_array_equal(out, np.array([0, 1, 4, 3])[:, None].repeat(32, 1))


@cuda.jit
def half_warp_shuffle(out):
    t = cuda.threadIdx.x
    if t < 16:
        out[t] = cuda.shfl_down_sync(0xFFFFFFFF, t, 1)
    else:
        out[t] = 0


def test_a_warp_intrinsic_whose_mask_names_inactive_lanes():
    f = one_fault(run(half_warp_shuffle, 1, 32, np.zeros(32, np.int64)), BarrierDivergence)
    assert "shfl_down_sync" in f.summary and "16" in f.summary
    assert f.lineno == line_of(half_warp_shuffle, "shfl_down_sync")


@cuda.jit
def half_warp_shuffle_right_mask(out):
    t = cuda.threadIdx.x
    if t < 16:
        out[t] = cuda.shfl_xor_sync(0x0000FFFF, t, 1)
    else:
        cuda.syncwarp(0xFFFF0000)
        out[t] = 0


def test_a_warp_intrinsic_whose_mask_names_exactly_the_active_lanes_is_fine():
    out = np.zeros(32, np.int64)
    run_clean(half_warp_shuffle_right_mask, 1, 32, out)
    np.testing.assert_array_equal(out[:16], np.arange(16) ^ 1)


@cuda.jit
def shuffle_reads_a_lane_outside_the_mask(out):
    t = cuda.threadIdx.x
    if t < 16:
        out[t] = cuda.shfl_down_sync(0x0000FFFF, t, 1)  # lane 15 reads lane 16, which is not taking part


@cuda.jit
def shuffle_after_early_return(a, out, n):
    i = cuda.threadIdx.x
    if i >= n:
        return
    out[i] = cuda.shfl_down_sync(0xFFFFFFFF, a[i], 8)


def test_a_shuffle_that_reads_a_lane_not_taking_part_is_a_fault():
    f = one_fault(run(shuffle_reads_a_lane_outside_the_mask, 1, 32, np.zeros(32, np.int64)), BarrierDivergence)
    assert "lane 15 reads lane 16" in f.summary and f.thread == (15, 0, 0)
    a = np.arange(32, dtype=np.float32)
    f = one_fault(run(shuffle_after_early_return, 1, 32, a, np.zeros(32, np.float32), 20), BarrierDivergence)
    assert "returned" in f.summary and f.thread == (12, 0, 0)


@cuda.jit
def syncwarp_divergent(out):
    t = cuda.threadIdx.x
    if t % 2 == 0:
        cuda.syncwarp()
    out[t] = t


def test_syncwarp_with_a_full_mask_in_a_divergent_branch():
    f = one_fault(run(syncwarp_divergent, 1, 32, np.zeros(32, np.int64)), BarrierDivergence)
    assert "syncwarp" in f.summary


@cuda.jit
def full_mask_after_return(out):
    t = cuda.threadIdx.x
    if t >= 20:
        return
    out[t] = cuda.shfl_sync(0xFFFFFFFF, t, 0)


def test_a_full_mask_after_some_lanes_returned_is_fine():
    out = np.full(32, -1, np.int64)
    run_clean(full_mask_after_return, 1, 32, out)
    np.testing.assert_array_equal(out[:20], 0)


# ---------------------------------------------------------------------------------------------- UninitializedRead


@cuda.jit
def shared_partly_written(out):
    sh = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    if t < 16:
        sh[t] = t
    cuda.syncthreads()
    out[t] = sh[t]


def test_reading_shared_memory_nobody_wrote():
    out = np.zeros(32, np.float32)
    f = one_fault(run(shared_partly_written, 1, 32, out), UninitializedRead)
    assert f.array == "sh" and f.index == (16,) and f.thread == (16, 0, 0)
    assert f.lineno == line_of(shared_partly_written, "out[t] = sh[t]")
    assert f.count == 16


@cuda.jit
def local_partly_written(out, n):
    lo = cuda.local.array(4, numba.int32)
    t = cuda.threadIdx.x
    for k in range(n):
        lo[k] = k
    s = 0
    for k in range(4):
        s += lo[k]
    out[t] = s


def test_reading_local_memory_the_thread_never_wrote():
    out = np.zeros(8, np.int64)
    f = one_fault(run(local_partly_written, 1, 8, out, 3), UninitializedRead)
    assert f.array == "lo" and f.index == (3,)
    assert not run(local_partly_written, 1, 8, out, 4).faults


@cuda.jit
def local_written_by_another_lane_does_not_count(out):
    lo = cuda.local.array(2, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        lo[0] = 5
    out[t] = lo[0]


def test_local_memory_is_per_thread_for_initialisation_too():
    f = one_fault(run(local_written_by_another_lane_does_not_count, 1, 4, np.zeros(4, np.int64)),
                  UninitializedRead)
    assert f.thread == (1, 0, 0)


# ---------------------------------------------------------------------------------------------- KernelTimeout


@cuda.jit
def spin(out):
    i = cuda.grid(1)
    while True:
        out[i] += 1


@cuda.jit
def spin_fast(out):
    x = 0
    while True:
        x += 1
    out[0] = x


@cuda.jit
def spin_some_finite(out):
    i = cuda.grid(1)
    x = 0
    while x < 2 * i + 7:
        x += 1
    out[i] = x


@cuda.jit
def spin_some(out):
    i = cuda.grid(1)
    x = i + 1
    while x != 5:      # only threads 0, 2 and 4 ever reach 5
        x += 2
    out[i] = x


def test_an_endless_loop_ends_with_a_timeout_at_the_loop():
    out = np.zeros(4, np.int64)
    f = one_fault(run(spin, 1, 4, out, max_steps=10**7), KernelTimeout)
    assert f.lineno == line_of(spin, "while True")
    assert out[0] > 10 and (out == out[0]).all()
    f = one_fault(run(spin_some, 1, 8, np.zeros(8, np.int64), max_steps=10**7), KernelTimeout)
    assert f.lineno == line_of(spin_some, "while x != 5")
    assert f.thread == (1, 0, 0) and f.block == (0, 0, 0)   # the first thread still looping
    assert "probably never ends" in f.summary and "max_steps" not in str(f)


def test_the_budget_counts_work_so_more_threads_run_fewer_iterations_of_an_endless_loop():
    runs = {}
    for threads, budget in ((4, 10**7), (4, 2 * 10**7), (4096, 2 * 10**7)):
        out = np.zeros(threads, np.int64)
        report = run(spin, 1, min(threads, 1024), out, max_steps=budget) if threads <= 1024 else \
            run(spin, threads // 1024, 1024, out, max_steps=budget)
        one_fault(report, KernelTimeout)
        assert report.steps > budget
        runs[threads, budget] = int(out[0])
    assert 1.8 <= runs[4, 2 * 10**7] / runs[4, 10**7] <= 2.2          # twice the budget, twice the iterations
    assert runs[4096, 2 * 10**7] < runs[4, 2 * 10**7] / 2               # a thousand times the lanes: fewer


def test_the_budget_is_exact_a_launch_needing_s_steps_runs_with_s_and_stops_with_one_less():
    out = np.zeros(8, np.int64)
    need = run(spin_some_finite, 1, 8, out).steps
    assert need > 0 and out.tolist() == [2 * i + 7 for i in range(8)]
    assert not run(spin_some_finite, 1, 8, np.zeros(8, np.int64), max_steps=need).faults
    f = one_fault(run(spin_some_finite, 1, 8, np.zeros(8, np.int64), max_steps=need - 1), KernelTimeout)
    assert f.lineno == line_of(spin_some_finite, "while x < 2 * i + 7")


def test_a_launch_whose_straight_line_code_alone_is_past_the_budget_stops_before_running():
    out = np.zeros(4096, np.int64)
    f = one_fault(run(spin, 4, 1024, out, max_steps=1000), KernelTimeout)
    assert f.lineno == line_of(spin, "def spin") and (out == 0).all()


def test_the_default_budget_ends_an_endless_loop_quickly():
    t0 = time.perf_counter()
    report = run(spin_fast, 1, 32, np.zeros(32, np.int64))
    assert faults(report, KernelTimeout)
    assert time.perf_counter() - t0 < 60


def test_a_long_but_finite_loop_is_not_a_timeout_with_the_default_budget():
    @cuda.jit
    def count(out, n):
        i = cuda.grid(1)
        s = 0
        for k in range(n):
            s += k
        out[i] = s

    out = np.zeros(32, np.int64)
    run_clean(count, 1, 32, out, 20000)
    assert out[0] == sum(range(20000))


# ---------------------------------------------------------------------------------------------- errors in the kernel


@cuda.jit
def int_div(a, b, out):
    i = cuda.grid(1)
    out[i, 0] = a[i] // b[i]
    out[i, 1] = a[i] % b[i]


def test_integer_division_by_zero_is_a_fault_with_its_location():
    a = np.array([6, 7, 8, 9], np.int64)
    b = np.array([2, 0, 4, 0], np.int64)
    out = np.zeros((4, 2), np.int64)
    report = run(int_div, 1, 4, a, b, out)
    fs = faults(report, KernelError)
    assert len(fs) == 2
    assert all("division by zero" in f.summary for f in fs)
    assert {f.lineno for f in fs} == {line_of(int_div, "a[i] // b[i]"), line_of(int_div, "a[i] % b[i]")}
    assert fs[0].thread == (1, 0, 0)
    assert out[0].tolist() == [3, 0] and out[2].tolist() == [2, 0]


def test_integer_division_by_zero_on_a_masked_off_lane_is_fine():
    @cuda.jit
    def k(a, b, out):
        i = cuda.grid(1)
        if b[i] != 0:
            out[i] = a[i] // b[i]

    out = np.zeros(4, np.int64)
    run_clean(k, 1, 4, np.array([6, 7, 8, 9]), np.array([2, 0, 4, 0]), out)
    assert out.tolist() == [3, 0, 2, 0]


def test_a_float_index_is_an_error_at_its_line():
    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        out[i] = a[i / 2]

    report = run(k, 1, 4, np.zeros(4), np.zeros(4))
    f = one_fault(report, KernelError)
    assert f.lineno == line_of(k, "a[i / 2]")


def test_wrong_number_of_arguments_is_a_launch_error():
    with pytest.raises(LaunchError, match="takes 2 arguments"):
        gpusim.launch(guarded, 1, 32, (np.zeros(4),))
    with pytest.raises(LaunchError):
        gpusim.jit(guarded)[1, 32](np.zeros(4), np.zeros(4), np.zeros(4))


@pytest.mark.parametrize("bad", [[1.0, 2.0], "abc", None, b"bytes", np.array([1], ">i4"), {"a": 1}])
def test_bad_argument_types_are_launch_errors(bad):
    with pytest.raises(LaunchError):
        gpusim.launch(guarded, 1, 32, (bad, np.zeros(4)))


def test_a_string_array_is_an_argument_whose_arithmetic_is_refused_at_its_line():
    with pytest.raises(UnsupportedConstruct, match=r"operator \* is not supported on str\[1\]") as e:
        gpusim.launch(guarded, 1, 32, (np.array(["x", "y"]), np.zeros(4)))
    assert e.value.lineno == line_of(guarded, "a[i] * 2")


# ---------------------------------------------------------------------------------------------- every fault


def every_fault():
    """One report of each fault class."""
    out = np.zeros(64, np.int64)
    return [
        one_fault(run(write_past_end, 2, 32, np.zeros(40, np.int64)), OutOfBounds),
        one_fault(run(barrier_in_branch, 1, 64, out), BarrierDivergence),
        one_fault(run(shared_partly_written, 1, 32, np.zeros(32, np.float32)), UninitializedRead),
        one_fault(run(spin, 1, 4, np.zeros(4, np.int64), max_steps=10**6), KernelTimeout),
        faults(run(int_div, 1, 4, np.ones(4, np.int64), np.zeros(4, np.int64), np.zeros((4, 2), np.int64)),
               KernelError)[0],
        one_fault(run(global_waw, 2, 1, np.zeros(1)), gpusim.DataRace),
    ]


@cuda.jit
def global_waw(out):
    out[0] = 1.0


def test_every_fault_is_located_and_starts_with_one_plain_sentence():
    for f in every_fault():
        assert isinstance(f, gpusim.KernelFault) and isinstance(f, Exception)
        name = type(f).__name__
        assert f.kernel and f.filename.endswith("test_faults.py"), name
        assert f.lineno > 0 and f.source_line.strip(), name
        first = str(f).splitlines()[0]
        assert first == f.summary and first.endswith("."), name
        assert first.count(". ") == 0 or name == "KernelTimeout", (name, first)
        assert f.source_line.strip() in str(f)
        for attr in ("block", "thread", "lineno", "source_line", "array", "index"):
            assert hasattr(f, attr), (name, attr)
        assert len(f.block) == 3 and len(f.thread) == 3, name
        d = f.to_dict()
        assert d["kind"] == name and d["line"] == f.lineno


def test_array_faults_name_the_array_and_index():
    oob, _, uninit, _, _, race = every_fault()
    assert (oob.array, oob.index) == ("out", (40,))
    assert (uninit.array, uninit.index) == ("sh", (16,))
    assert (race.array, race.index) == ("out", (0,))


def test_raise_for_faults_raises_the_first_fault():
    report = run(write_past_end, 2, 32, np.zeros(40, np.int64))
    with pytest.raises(OutOfBounds) as e:
        report.raise_for_faults()
    assert e.value is report.faults[0]
    run_clean(write_past_end, 2, 32, np.zeros(64, np.int64)).raise_for_faults()


# ---------------------------------------------------------------------------------------------- warp masks


@cuda.jit
def lane_outside_its_mask(out, which):
    t = cuda.threadIdx.x
    if which == 0:
        out[t] = cuda.shfl_sync(0x0000FFFF, t, 0)          # lanes 16-31 execute it, but the mask leaves them out
    elif which == 1:
        out[t] = cuda.ballot_sync(0x0000FFFF, t > 3)
    elif which == 2:
        cuda.syncwarp(0xFFFF0000)
    else:
        out[t] = cuda.match_any_sync(0x0000FFFF, t % 4)


def test_a_lane_executing_a_sync_call_its_mask_leaves_out_is_a_fault_as_synccheck_reports_it():
    for which, name in enumerate(("shfl_sync()", "ballot_sync()", "syncwarp()", "match_any_sync()")):
        f = one_fault(run(lane_outside_its_mask, 1, 32, np.zeros(32, np.int64), which), BarrierDivergence)
        first = 16 if which != 2 else 0
        assert f.summary.startswith(f"{name} is executed by lane {first}, which its mask"), f.summary
        assert "synccheck" in f.summary and f.thread == (first, 0, 0)
        assert f.count == 1 and f.lineno > 0


def test_masks_naming_exactly_the_executing_lanes_are_fine():
    @cuda.jit
    def halves(out):
        t = cuda.threadIdx.x
        if t < 16:
            out[t] = cuda.shfl_sync(0x0000FFFF, t, 3) + cuda.match_any_sync(0x0000FFFF, t % 4)
        else:
            out[t] = cuda.ballot_sync(0xFFFF0000, t > 20)

    out = np.zeros(32, np.int64)
    run_clean(halves, 1, 32, out)
    assert out[:16].tolist() == [3 + sum(1 << k for k in range(16) if k % 4 == t % 4) for t in range(16)]
    assert out[16:].tolist() == [int(np.uint32(sum(1 << k for k in range(21, 32))).view(np.int32))] * 16
