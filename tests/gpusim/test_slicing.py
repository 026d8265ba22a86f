"""Slices of arrays in kernels: views that share the array's memory (Python's slice rules, checked against
NumPy's slicing of the same arrays), slice assignment, views passed to device functions and atomics, faults
reported against the view and its array, and traffic counted on the array underneath (sectors by hand)."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda, int32

import gpusim
from gpusim.faults import KernelError, OutOfBounds


def _run(kernel, grid, block, *args, shared_mem=0):
    r = gpusim.launch(kernel, grid, block, args, shared_mem=shared_mem)
    r.raise_for_faults()
    return r


SLICES = [(None, None, None), (1, None, None), (None, -2, None), (-3, None, None), (None, None, 2),
          (None, None, -1), (5, 1, -2), (-1, -8, -3), (2, 100, None), (-100, 3, None), (4, 2, None), (1, 7, 3)]


def read_slices(a, out, lens):
    out[0, :] = -1
    v0 = a[:]
    v1 = a[1:]
    v2 = a[:-2]
    v3 = a[-3:]
    v4 = a[::2]
    v5 = a[::-1]
    v6 = a[5:1:-2]
    v7 = a[-1:-8:-3]
    v8 = a[2:100]
    v9 = a[-100:3]
    v10 = a[4:2]
    v11 = a[1:7:3]
    for k, v in enumerate((v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11)):
        lens[k] = len(v)
        for j in range(v.shape[0]):
            out[k, j] = v[j]


def test_slices_follow_pythons_rules():
    a = np.arange(10, 20, dtype=np.int64)
    out = np.full((len(SLICES), 10), -1, np.int64)
    lens = np.zeros(len(SLICES), np.int64)
    _run(read_slices, 1, 1, a, out, lens)
    for k, (lo, hi, st) in enumerate(SLICES):
        want = a[slice(lo, hi, st)]
        assert lens[k] == len(want), (lo, hi, st)
        assert out[k, :len(want)].tolist() == want.tolist(), (lo, hi, st)


@cuda.jit(device=True)
def copy_row(src, dst):
    for i in range(dst.shape[0]):
        dst[i] = src[i]


def rows(inp, out):
    i = cuda.grid(1)
    copy_row(inp[i, :], out[i])
    out[i, 1:3] = 7
    out[i, -2:] = inp[i, :2]
    col = out[:, 0]
    col[i] += 1000


def test_rows_columns_and_slice_assignment_write_the_array():
    inp = np.arange(60, dtype=np.int32).reshape(6, 10)
    out = np.zeros_like(inp)
    _run(rows, 1, 6, inp, out)
    want = inp.copy()
    want[:, 1:3] = 7
    want[:, -2:] = inp[:, :2]
    want[:, 0] += 1000
    assert (out == want).all()


def dyn_views(x):
    dyn = cuda.shared.array(0, dtype=int32)
    back = dyn[3:1:-1]
    even = dyn[::2]
    dyn[0] = 10
    dyn[1] = 11
    dyn[2] = 12
    dyn[3] = 13
    x[0] = back[0]
    x[1] = back[1]
    x[2] = even[1]
    x[3] = len(even)


def test_views_of_dynamic_shared_memory_alias_it():
    x = np.zeros(4, np.int32)
    _run(dyn_views, 1, 1, x, shared_mem=4 * 4)
    assert x.tolist() == [13, 12, 12, 2]


def cas_tail(res, old, ary):
    gid = cuda.grid(1)
    if gid < res.size:
        old[gid] = cuda.atomic.compare_and_swap(res[gid:], 0, ary[gid])


def test_an_atomic_on_a_per_thread_view_updates_its_first_element():
    res = np.zeros(8, np.int32)
    res[::2] = 3
    old = np.full(8, -1, np.int32)
    before = res.copy()
    _run(cas_tail, 1, 8, res, old, np.arange(8, dtype=np.int32) + 1)
    assert old.tolist() == before.tolist()
    assert res.tolist() == np.where(before == 0, np.arange(8) + 1, before).tolist()


def past_view(a):
    v = a[2:4]
    v[cuda.threadIdx.x] = 1


def test_an_index_past_the_view_is_out_of_bounds_though_inside_the_array():
    a = np.zeros(6)
    rep = gpusim.launch(past_view, 1, 3, (a,))
    f = next(f for f in rep.faults if isinstance(f, OutOfBounds))
    text = str(f)
    assert "view a[2:4] (size 2)" in text and "global array 'a'" in text and "thread (2, 0, 0)" in text
    assert f.lineno == past_view.__code__.co_firstlineno + 2
    assert a.tolist() == [0, 0, 1, 1, 0, 0]  # the threads inside the view wrote; the one past it did not


def bad_row(a, i):
    r = a[i]
    r[0] = 1.0


def zero_step(a, s):
    v = a[::s]
    a[0] = len(v)


def test_a_row_outside_the_array_and_a_zero_step_are_faults():
    rep = gpusim.launch(bad_row, 1, 1, (np.zeros((3, 2)), 3))
    assert any(isinstance(f, OutOfBounds) and "view a[i]" in str(f) for f in rep.faults)
    rep = gpusim.launch(zero_step, 1, 1, (np.zeros(3), 0))
    assert any(isinstance(f, KernelError) and "slice step cannot be zero" in str(f) for f in rep.faults)


def racing_views(a):
    left = a[0:4]
    right = a[2:6]
    t = cuda.threadIdx.x
    if t == 0:
        left[3] = 1.0
    else:
        right[1] = 2.0


def test_two_views_of_one_element_race_on_the_array():
    rep = gpusim.launch(racing_views, 1, 2, (np.zeros(6),))
    assert any("Data race on global array 'a' at [3]" in str(f) for f in rep.faults)


def shifted(a, out):
    v = a[1:]
    i = cuda.grid(1)
    out[i] = v[i]


def test_a_view_access_is_counted_on_the_array_underneath():
    # 32 lanes read float32 a[1 + i]: bytes 4..131 of a 256-aligned array span 5 sectors (not 4)
    m = _run(shifted, 1, 32, np.zeros(40, np.float32), np.zeros(32, np.float32)).metrics
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 1
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 5


def test_a_slice_of_too_many_dimensions_is_a_compile_error():
    def three(a):
        a[0, 1:, 2] = 1.0

    with pytest.raises(gpusim.KernelCompileError):
        gpusim.launch(three, 1, 1, (np.zeros((2, 2)),))
