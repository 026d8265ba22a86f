"""The launch API: ``gpusim.launch``, ``gpusim.jit(k)[grid, block](...)``, argument handling and chunking."""

from __future__ import annotations

import importlib

import numba
import numpy as np
import pytest
from numba import cuda
from simkit import faults, line_of, one_fault, run, run_clean

import gpusim
from gpusim import DataRace, KernelError, LaunchError, LaunchReport, OutOfBounds

launch_module = importlib.import_module("gpusim.launch")   # (gpusim.launch is the function)


@cuda.jit
def axpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def test_launch_updates_arrays_in_place_and_returns_a_report():
    x = np.arange(100, dtype=np.float32)
    y = np.ones(100, np.float32)
    out = np.zeros(100, np.float32)
    report = gpusim.launch(axpy, 4, 32, (np.float32(2), x, y, out))
    assert isinstance(report, LaunchReport)
    assert report.faults == [] and report.ok
    assert isinstance(report.metrics, dict)
    assert report.launch.grid == (4, 1, 1) and report.launch.block == (32, 1, 1)
    np.testing.assert_array_equal(out, 2 * x + 1)


def test_launch_never_raises_a_fault_but_raise_for_faults_does():
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(100, np.float32)
    report = gpusim.launch(axpy, 4, 32, (1.0, x, x, out))
    assert faults(report, OutOfBounds)
    with pytest.raises(OutOfBounds):
        report.raise_for_faults()


@pytest.mark.parametrize("grid, block, want_grid, want_block", [
    (4, 32, (4, 1, 1), (32, 1, 1)),
    ((4,), (32,), (4, 1, 1), (32, 1, 1)),
    ((2, 2), (8, 4), (2, 2, 1), (8, 4, 1)),
    ((2, 1, 2), (4, 4, 2), (2, 1, 2), (4, 4, 2)),
    (np.int64(4), [32], (4, 1, 1), (32, 1, 1)),
])
def test_grid_and_block_as_ints_or_tuples(grid, block, want_grid, want_block):
    @cuda.jit
    def count(out):
        cuda.atomic.add(out, 0, 1)

    out = np.zeros(1, np.int64)
    report = run_clean(count, grid, block, out)
    assert report.launch.grid == want_grid and report.launch.block == want_block
    assert out[0] == np.prod(want_grid) * np.prod(want_block)


@pytest.mark.parametrize("grid, block", [
    (0, 32), (4, 0), (-1, 32), ((1, 2, 3, 4), 32), (4, (1, 1, 1, 1)), (2.0, 32), (4, 1025), (4, (32, 32, 2)),
    (True, 32), ("4", 32), ((), 32),
])
def test_bad_grids_and_blocks_are_launch_errors(grid, block):
    with pytest.raises(LaunchError):
        gpusim.launch(axpy, grid, block, (1.0, np.zeros(4), np.zeros(4), np.zeros(4)))


def test_negative_shared_memory_is_a_launch_error():
    with pytest.raises(LaunchError):
        gpusim.launch(axpy, 1, 32, (1.0, np.zeros(4), np.zeros(4), np.zeros(4)), shared_mem=-4)


def test_scalars_of_every_kind():
    @cuda.jit
    def k(out, a, b, c, d, e):
        out[0] = a + b + c + d + e

    out = np.zeros(1)
    run_clean(k, 1, 1, out, 1, 2.5, np.int32(3), np.float32(0.5), True)
    assert out[0] == 8.0


def test_a_read_only_array_is_a_launch_error():
    x = np.arange(4, dtype=np.float32)
    x.setflags(write=False)
    with pytest.raises(LaunchError, match="read-only"):
        gpusim.launch(axpy, 1, 32, (1.0, x, x, np.zeros(4, np.float32)))


# ---------------------------------------------------------------------------------------------- jit


def test_jit_launch_configuration_runs_and_raises_the_first_fault():
    k = gpusim.jit(axpy)
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    k[2, 32](np.float32(3), x, x, out)
    np.testing.assert_array_equal(out, 4 * x)
    assert k.last_report is not None and k.last_report.ok
    small = np.zeros(8, np.float32)
    with pytest.raises(OutOfBounds) as e:
        k[2, 32](np.float32(3), x, small, np.zeros(64, np.float32))
    assert e.value.array == "y" and e.value.index == (8,)
    assert k.last_report.faults[0] is e.value


def test_jit_with_stream_and_dynamic_shared_memory():
    @cuda.jit
    def rev(a, out):
        dyn = cuda.shared.array(0, numba.float64)
        t = cuda.threadIdx.x
        dyn[t] = a[cuda.grid(1)]
        cuda.syncthreads()
        out[cuda.grid(1)] = dyn[cuda.blockDim.x - 1 - t]

    a = np.arange(32.0)
    out = np.zeros(32)
    gpusim.jit(rev)[2, 16, 0, 16 * 8](a, out)
    np.testing.assert_array_equal(out, a.reshape(2, 16)[:, ::-1].reshape(-1))
    with pytest.raises(OutOfBounds):
        gpusim.jit(rev)[2, 16, 0, 8 * 8](a, out)


def test_jit_as_a_decorator_and_its_misuse():
    @gpusim.jit
    def fill(out, v):
        out[cuda.grid(1)] = v

    out = np.zeros(8)
    fill[1, 8](out, 2.5)
    np.testing.assert_array_equal(out, 2.5)
    assert fill.__name__ == "fill"
    with pytest.raises(LaunchError):
        fill(out, 1.0)
    with pytest.raises(LaunchError):
        fill[1](out, 1.0)
    with pytest.raises(LaunchError):
        fill[1, 2, 3, 4, 5](out, 1.0)


def test_a_cuda_jit_dispatcher_is_accepted_everywhere():
    assert hasattr(axpy, "py_func")
    out = np.zeros(4, np.float32)
    run_clean(axpy, 1, 4, np.float32(1), np.ones(4, np.float32), np.ones(4, np.float32), out)
    gpusim.jit(axpy)[1, 4](np.float32(1), np.ones(4, np.float32), np.ones(4, np.float32), out)
    run_clean(axpy.py_func, 1, 4, np.float32(1), np.ones(4, np.float32), np.ones(4, np.float32), out)
    np.testing.assert_array_equal(out, 2)


def test_something_that_is_not_a_kernel_is_a_launch_error():
    with pytest.raises(LaunchError):
        gpusim.launch(42, 1, 1, ())


# ---------------------------------------------------------------------------------------------- arrays


def test_one_array_passed_twice_is_one_memory():
    @cuda.jit
    def shift(src, dst):
        i = cuda.grid(1)
        if i < 7:
            dst[i + 1] = src[i]

    a = np.arange(8, dtype=np.int64)
    report = run(shift, 1, 8, a, a)
    # thread i writes a[i+1], which thread i+1 reads: a race only because both names are one array
    assert faults(report, DataRace)


def test_non_contiguous_views_are_read_and_written_in_place():
    @cuda.jit
    def double_view(v):
        r, c = cuda.grid(2)
        if r < v.shape[0] and c < v.shape[1]:
            v[r, c] = v[r, c] * 2

    base = np.arange(48, dtype=np.float64).reshape(6, 8)
    view = base[1:5, ::2]
    want = base.copy()
    want[1:5, ::2] *= 2
    run_clean(double_view, 1, (4, 4), view)
    np.testing.assert_array_equal(base, want)


def test_too_much_static_shared_memory_is_reported():
    @cuda.jit
    def big(out):
        sh = cuda.shared.array(13000, numba.float32)   # 52,000 bytes > 48 KiB
        sh[cuda.threadIdx.x] = 1
        out[0] = 0

    out = np.ones(1)
    report = run(big, 1, 1, out)
    f = one_fault(report, KernelError)
    assert "48" in f.summary and "52000" in f.summary
    assert f.lineno == line_of(big, "cuda.shared.array") and out[0] == 1   # refused before it ran


# ---------------------------------------------------------------------------------------------- chunks


@cuda.jit
def block_sum(a, out):
    sh = cuda.shared.array(64, numba.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


def test_a_launch_bigger_than_one_chunk_gives_the_same_result(monkeypatch):
    a = np.random.default_rng(0).random(64 * 37)
    full = np.zeros(37)
    run_clean(block_sum, 37, 64, a, full)
    monkeypatch.setattr(launch_module, "CHUNK_LANES", 64 * 5)   # 5 blocks per chunk: 8 chunks, the last short
    chunked = np.zeros(37)
    run_clean(block_sum, 37, 64, a, chunked)
    np.testing.assert_array_equal(chunked, full)
    np.testing.assert_allclose(full, a.reshape(37, 64).sum(axis=1))


def test_a_launch_over_the_real_chunk_size():
    n = launch_module.CHUNK_LANES + 3 * 256
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    run_clean(axpy, n // 256, 256, np.float32(2), x, x, out)
    np.testing.assert_array_equal(out, 3 * x)


@cuda.jit
def first_and_last_block(buf, out):
    i = cuda.grid(1)
    if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
        buf[0] = 1.0
    if cuda.blockIdx.x == cuda.gridDim.x - 1 and cuda.threadIdx.x == 0:
        out[0] = buf[0]
    if i == 5:
        out[1] = buf[7]
    if cuda.blockIdx.x == cuda.gridDim.x - 1 and cuda.threadIdx.x == 7:
        buf[7] = 2.0


@pytest.mark.parametrize("per_chunk_blocks", [1, 3, 100])
def test_cross_block_races_are_found_across_chunks(monkeypatch, per_chunk_blocks):
    monkeypatch.setattr(launch_module, "CHUNK_LANES", 32 * per_chunk_blocks)
    report = run(first_and_last_block, 10, 32, np.zeros(8), np.zeros(2))
    races = faults(report, DataRace)
    hazards = sorted(f.hazard for f in races)
    assert hazards == ["read after write", "write after read"], [str(f) for f in races]
    for f in races:
        assert {f.block, f.other_block} == {(0, 0, 0), (9, 0, 0)}


def test_a_timeout_in_a_later_chunk_is_still_found(monkeypatch):
    @cuda.jit
    def late_spin(out):
        x = 0
        while cuda.blockIdx.x == 7 and x >= 0:
            x += 1
        out[cuda.grid(1)] = 1

    monkeypatch.setattr(launch_module, "CHUNK_LANES", 64)
    report = run(late_spin, 8, 32, np.zeros(256), max_steps=10**7)
    f = one_fault(report, gpusim.KernelTimeout)
    assert f.lineno > 0 and f.block == (7, 0, 0)


@cuda.jit
def handoff_in_block_seven(out, synced):
    sh = cuda.shared.array(1, numba.float64)
    t = cuda.threadIdx.x
    if cuda.blockIdx.x == 7 and t == 0:
        sh[0] = 1.0
    if synced:
        cuda.syncthreads()
    if cuda.blockIdx.x == 7 and t == 1:
        out[0] = sh[0]


@pytest.mark.parametrize("per_chunk_blocks", [1, 3])
def test_barriers_order_accesses_in_a_later_chunk_and_their_absence_is_a_race_there(monkeypatch, per_chunk_blocks):
    # barrier epochs are kept per chunk: block 7 is in the third or the eighth chunk
    monkeypatch.setattr(launch_module, "CHUNK_LANES", 32 * per_chunk_blocks)
    out = np.zeros(1)
    run_clean(handoff_in_block_seven, 9, 32, out, True)
    assert out[0] == 1.0
    f = one_fault(run(handoff_in_block_seven, 9, 32, np.zeros(1), False), DataRace)
    assert f.block == (7, 0, 0) and f.other_block == (7, 0, 0) and f.hazard == "read after write"
