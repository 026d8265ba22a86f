"""Memory spaces (shared per block, local per thread, const, dynamic shared) and atomics."""

from __future__ import annotations

import importlib
from collections import Counter

import numba
import numpy as np
import pytest
from numba import cuda
from simkit import faults, run, run_clean

import gpusim

TPB = 32
TPB_PADDED = TPB + 1
TABLE = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int64)
WEIGHTS = np.linspace(0.0, 1.0, 8).astype(np.float32)

# ---------------------------------------------------------------------------------------------- shared


@cuda.jit
def rotate_in_shared(a, out):
    sh = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i]
    cuda.syncthreads()
    out[i] = sh[(t + 1) % TPB]


def test_each_block_has_its_own_shared_array():
    a = np.arange(5 * TPB, dtype=np.float32)
    out = np.zeros_like(a)
    run_clean(rotate_in_shared, 5, TPB, a, out)
    np.testing.assert_array_equal(out, np.roll(a.reshape(5, TPB), -1, axis=1).reshape(-1))


def test_shared_arrays_are_per_block_across_chunks(monkeypatch):
    gl = importlib.import_module("gpusim.launch")   # (the package's `launch` attribute is the function)
    monkeypatch.setattr(gl, "CHUNK_LANES", 2 * TPB)   # 2 blocks per chunk, 4 chunks
    a = np.arange(7 * TPB, dtype=np.float32)
    out = np.zeros_like(a)
    run_clean(rotate_in_shared, 7, TPB, a, out)
    np.testing.assert_array_equal(out, np.roll(a.reshape(7, TPB), -1, axis=1).reshape(-1))


@cuda.jit
def shared_shapes_and_dtypes(out):
    t = cuda.threadIdx.x
    a = cuda.shared.array((4, 8), numba.float32)
    b = cuda.shared.array(shape=(2, 2, 8), dtype=np.int16)
    c = cuda.shared.array(TPB, dtype=np.float64)
    d = cuda.shared.array((TPB, TPB_PADDED), numba.int32)  # an expression like TPB + 1 is rejected
    a[t // 8, t % 8] = t * 0.5
    b[t // 16, (t // 8) % 2, t % 8] = t - 40
    c[t] = t * 0.25
    d[t, TPB] = t * 3
    cuda.syncthreads()
    u = TPB - 1 - t
    out[t, 0] = a[u // 8, u % 8]
    out[t, 1] = b[u // 16, (u // 8) % 2, u % 8]
    out[t, 2] = c[u]
    out[t, 3] = d[u, TPB]
    out[t, 4] = a.size + 100 * b.ndim + 1000 * d.shape[1]


def test_shared_arrays_with_int_and_tuple_shapes_and_numba_or_numpy_dtypes():
    out = np.zeros((TPB, 5), np.float64)
    report = run_clean(shared_shapes_and_dtypes, 1, TPB, out)
    u = TPB - 1 - np.arange(TPB)
    np.testing.assert_array_equal(out[:, 0], u * 0.5)
    np.testing.assert_array_equal(out[:, 1], u - 40)
    np.testing.assert_array_equal(out[:, 2], u * 0.25)
    np.testing.assert_array_equal(out[:, 3], u * 3)
    np.testing.assert_array_equal(out[:, 4], 32 + 300 + 33000)
    shared = {a.name: a for a in report.arrays if a.space == "shared"}
    assert shared["a"].dtype == np.float32 and shared["a"].shape == (4, 8)
    assert shared["b"].dtype == np.int16 and shared["b"].shape == (2, 2, 8)
    assert shared["c"].dtype == np.float64
    assert shared["d"].dtype == np.int32 and shared["d"].shape == (TPB, TPB + 1)
    assert report.shared_bytes_per_block >= 4 * 32 + 2 * 32 + 8 * 32 + 4 * 32 * 33


@cuda.jit
def two_arrays_one_line(out):
    t = cuda.threadIdx.x
    x = cuda.shared.array(TPB, numba.int32); y = cuda.shared.array(TPB, numba.int32)  # noqa: E702
    p, q = cuda.shared.array(TPB, numba.int32), cuda.shared.array(TPB, numba.int32)
    x[t] = 1
    y[t] = 2
    p[t] = 3
    q[t] = 4
    cuda.syncthreads()
    out[cuda.grid(1)] = x[t] * 1000 + y[t] * 100 + p[t] * 10 + q[t]


def test_two_shared_arrays_declared_on_one_line_are_distinct():
    out = np.zeros(2 * TPB, np.int64)
    run_clean(two_arrays_one_line, 2, TPB, out)
    np.testing.assert_array_equal(out, 1234)


@cuda.jit
def dynamic_shared(a, out):
    dyn = cuda.shared.array(0, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    dyn[t] = a[i]
    cuda.syncthreads()
    out[i] = dyn[cuda.blockDim.x - 1 - t] + dyn.size


def test_dynamic_shared_memory_is_sized_by_the_launch():
    a = np.arange(3 * 48, dtype=np.float32)
    out = np.zeros_like(a)
    report = run_clean(dynamic_shared, 3, 48, a, out, shared_mem=48 * 4)
    np.testing.assert_array_equal(out, a.reshape(3, 48)[:, ::-1].reshape(-1) + 48)
    assert report.shared_bytes_per_block == 48 * 4


def test_dynamic_shared_memory_through_the_launch_configuration():
    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    gpusim.jit(dynamic_shared)[2, 32, 0, 32 * 4](a, out)
    np.testing.assert_array_equal(out, a.reshape(2, 32)[:, ::-1].reshape(-1) + 32)


def test_dynamic_shared_memory_too_small_for_the_block_is_out_of_bounds():
    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    report = run(dynamic_shared, 2, 32, a, out, shared_mem=16 * 4)
    f = faults(report, gpusim.OutOfBounds)[0]
    assert f.array == "dyn" and f.index == (16,)


@cuda.jit
def dynamic_aliases(out):
    f = cuda.shared.array(0, numba.float32)
    k = cuda.shared.array(0, numba.int32)
    t = cuda.threadIdx.x
    f[t] = 1.0
    out[t] = k[t]


def test_every_dynamic_shared_array_starts_at_the_same_address():
    out = np.zeros(8, np.int64)
    run_clean(dynamic_aliases, 1, 8, out, shared_mem=8 * 4)
    np.testing.assert_array_equal(out, np.float32(1.0).view(np.int32))   # 0x3f800000


# ---------------------------------------------------------------------------------------------- local


@cuda.jit
def local_arrays(out):
    i = cuda.grid(1)
    lo = cuda.local.array(6, numba.int64)
    m = cuda.local.array((2, 3), dtype=np.float32)
    for k in range(6):
        lo[k] = i * 10 + k
    for r in range(2):
        for c in range(3):
            m[r, c] = lo[r * 3 + c] * 0.5
    s = 0
    for k in range(i % 6 + 1):
        s += lo[k]
    out[i, 0] = s
    out[i, 1] = m[1, 2]


def test_local_arrays_are_private_to_each_thread():
    out = np.zeros((96, 2))
    run_clean(local_arrays, 3, 32, out)
    for i in range(96):
        assert out[i, 0] == sum(i * 10 + k for k in range(i % 6 + 1))
        assert out[i, 1] == (i * 10 + 5) * 0.5


# ---------------------------------------------------------------------------------------------- const


@cuda.jit
def const_reads(out):
    i = cuda.grid(1)
    tab = cuda.const.array_like(TABLE)
    out[i, 0] = tab[i % 8]
    out[i, 1] = TABLE[(i + 1) % TABLE.size]
    out[i, 2] = WEIGHTS[i % 8]


def test_const_arrays_and_module_level_numpy_arrays_read_as_constants():
    out = np.zeros((16, 3), np.float64)
    run_clean(const_reads, 1, 16, out)
    i = np.arange(16)
    np.testing.assert_array_equal(out[:, 0], TABLE[i % 8])
    np.testing.assert_array_equal(out[:, 1], TABLE[(i + 1) % 8])
    np.testing.assert_array_equal(out[:, 2], WEIGHTS[i % 8])


@cuda.jit
def const_write(out):
    i = cuda.grid(1)
    tab = cuda.const.array_like(TABLE)
    tab[i] = 0
    out[i] = 1


def test_writing_a_const_array_is_an_error_and_leaves_the_module_array_alone():
    before = TABLE.copy()
    try:
        report = run(const_write, 1, 4, np.zeros(4, np.int64))
    except gpusim.KernelCompileError:
        pass
    else:
        assert report.faults, "a write to constant memory must not pass silently"
        assert report.faults[0].lineno > 0
    np.testing.assert_array_equal(TABLE, before)


def test_const_out_of_bounds_is_caught():
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        out[i] = TABLE[i]

    f = faults(run(k, 1, 10, np.zeros(10, np.int64)), gpusim.OutOfBounds)[0]
    assert f.array == "TABLE" and f.index == (8,) and f.thread == (8, 0, 0)


# ---------------------------------------------------------------------------------------------- atomics


@cuda.jit
def atomics_one_address(arr, olds, vals):
    i = cuda.grid(1)
    v = vals[i]
    olds[0, i] = cuda.atomic.add(arr, 0, v)
    olds[1, i] = cuda.atomic.sub(arr, 1, v)
    olds[2, i] = cuda.atomic.max(arr, 2, v)
    olds[3, i] = cuda.atomic.min(arr, 3, v)
    olds[4, i] = cuda.atomic.exch(arr, 4, v)
    olds[5, i] = cuda.atomic.and_(arr, 5, v)
    olds[6, i] = cuda.atomic.or_(arr, 6, v)
    olds[7, i] = cuda.atomic.xor(arr, 7, v)


def test_atomics_on_one_address_serialise_and_return_the_old_value():
    n = 128
    v = np.random.default_rng(5).integers(1, 1 << 20, n).astype(np.int64)
    init = np.array([0, 0, -5, 1 << 30, -1, (1 << 40) - 1, 0, 0], np.int64)
    arr = init.copy()
    olds = np.zeros((8, n), np.int64)
    run_clean(atomics_one_address, 2, 64, arr, olds, v)
    # add/sub: replay the lanes in the order their old values say they ran
    for k, sign in [(0, 1), (1, -1)]:
        acc = init[k]
        for j in np.argsort(sign * olds[k], kind="stable"):
            assert olds[k, j] == acc
            acc += sign * v[j]
        assert arr[k] == acc == sign * v.sum()
    # max/min: the old values are the start or some lane's value, never past the final one
    assert arr[2] == v.max() and arr[3] == v.min()
    assert set(olds[2].tolist()) <= {-5, *v.tolist()} and (olds[2] <= arr[2]).all() and -5 in olds[2]
    assert set(olds[3].tolist()) <= {1 << 30, *v.tolist()} and (olds[3] >= arr[3]).all() and 1 << 30 in olds[3]
    # exch: every old value but one is some lane's value, and the final value is the one nobody saw
    assert Counter(olds[4].tolist() + [int(arr[4])]) == Counter(v.tolist() + [-1])
    and_all, or_all, xor_all = init[5], 0, 0
    for x in v:
        and_all &= x
        or_all |= x
        xor_all ^= x
    assert arr[5] == and_all and arr[6] == or_all and arr[7] == xor_all
    assert init[5] in olds[5] and 0 in olds[6] and 0 in olds[7]
    assert ((olds[6] | or_all) == or_all).all()


@cuda.jit
def counter_and_compaction(a, count, out):
    i = cuda.grid(1)
    if i < a.size and a[i] % 3 == 0:
        k = cuda.atomic.add(count, 0, 1)
        out[k] = a[i]


def test_atomic_add_returns_distinct_slots_for_stream_compaction():
    a = np.arange(200, dtype=np.int64)
    count = np.zeros(1, np.int64)
    out = np.full(200, -1, np.int64)
    run_clean(counter_and_compaction, 4, 64, a, count, out)
    assert count[0] == 67
    assert sorted(out[:67].tolist()) == list(range(0, 200, 3))
    assert (out[67:] == -1).all()


@cuda.jit
def inc_dec(arr, olds):
    i = cuda.grid(1)
    olds[0, i] = cuda.atomic.inc(arr, 0, numba.uint32(4))
    olds[1, i] = cuda.atomic.dec(arr, 1, numba.uint32(4))


def test_atomic_inc_wraps_at_the_limit_and_dec_wraps_at_zero():
    arr = np.array([0, 2], np.uint32)
    olds = np.zeros((2, 12), np.uint32)
    run_clean(inc_dec, 1, 12, arr, olds)
    # inc: old >= 4 ? 0 : old + 1 ; dec: (old == 0 or old > 4) ? 4 : old - 1 — the sequences are fixed
    assert sorted(olds[0].tolist()) == sorted([0, 1, 2, 3, 4] * 2 + [0, 1])
    assert arr[0] == 2
    assert sorted(olds[1].tolist()) == sorted([2, 1, 0, 4, 3, 2, 1, 0, 4, 3, 2, 1])
    assert arr[1] == 0


@cuda.jit
def cas_only(arr, olds):
    i = cuda.grid(1)
    olds[i] = cuda.atomic.cas(arr, 0, 0, i + 1)


@cuda.jit
def compare_and_swap_only(flag, olds):
    i = cuda.grid(1)
    olds[i] = cuda.atomic.compare_and_swap(flag, 7, i + 100)


def test_cas_lets_exactly_one_lane_win():
    arr = np.zeros(1, np.int32)
    olds = np.full(40, -1, np.int32)
    run_clean(cas_only, 2, 20, arr, olds)
    winners = np.flatnonzero(olds == 0)
    assert len(winners) == 1
    assert arr[0] == winners[0] + 1
    assert (olds[olds != 0] == arr[0]).all()


def test_compare_and_swap_works_on_element_zero():
    flag = np.array([7, 50], np.int64)
    olds = np.zeros(10, np.int64)
    run_clean(compare_and_swap_only, 1, 10, flag, olds)
    assert (olds == 7).sum() == 1
    assert flag[0] == olds[olds != 7][0] and flag[1] == 50
    assert 100 <= flag[0] < 110


@cuda.jit
def shared_histogram(a, hist):
    sh = cuda.shared.array(8, numba.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < 8:
        sh[t] = 0
    cuda.syncthreads()
    if i < a.size:
        cuda.atomic.add(sh, a[i] % 8, 1)
    cuda.syncthreads()
    if t < 8:
        cuda.atomic.add(hist, t, sh[t])


def test_a_shared_memory_histogram_with_atomics_is_exact_and_race_free():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 1000, 1000)
    hist = np.zeros(8, np.int32)
    run_clean(shared_histogram, 8, 128, a, hist)
    np.testing.assert_array_equal(hist, np.bincount(a % 8, minlength=8))


@cuda.jit
def atomic_2d_and_float(grid_count, total):
    r, c = cuda.grid(2)
    cuda.atomic.add(grid_count, (r % 3, c % 2), 1)
    cuda.atomic.add(total, 0, 0.5)


def test_atomics_with_tuple_indices_and_floats():
    counts = np.zeros((3, 2), np.int64)
    total = np.zeros(1, np.float32)
    run_clean(atomic_2d_and_float, (2, 2), (6, 4), counts, total)
    want = np.zeros((3, 2), np.int64)
    for r in range(12):
        for c in range(8):
            want[r % 3, c % 2] += 1
    np.testing.assert_array_equal(counts, want)
    assert total[0] == pytest.approx(96 * 0.5)
