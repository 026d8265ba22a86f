"""NumPy arrays made and reshaped in kernels: np.empty/zeros/ones with a constant shape (each thread's own
array), .copy() of a module array, .reshape() as a view (checked against NumPy's reshape of the same array),
and a device function returning a view. Expected values come from NumPy."""

from __future__ import annotations

import numpy as np
from numba import cuda

import gpusim
from gpusim.faults import KernelError, UninitializedRead

TABLE = np.array([3.0, 1.0, 4.0, 1.5])[::-1]


def _run(kernel, grid, block, *args):
    r = gpusim.launch(kernel, grid, block, args)
    r.raise_for_faults()
    return r


def made(out):
    i = cuda.grid(1)
    z = np.zeros((2, 3), np.int32)
    o = np.ones(4, np.float64)
    e = np.empty(3, np.int64)
    e[0] = i
    z[1, 2] = i + 1
    q = TABLE.copy()
    q[0] += o[3]
    out[i, 0] = z[0, 0] + z[1, 2] + o[2] + e[0] + q[0] + q[3]


def test_made_arrays_start_as_numpy_makes_them_and_belong_to_each_thread():
    out = np.zeros((4, 1))
    _run(made, 1, 4, out)
    i = np.arange(4)
    assert out[:, 0].tolist() == (0 + (i + 1) + 1 + i + (TABLE[0] + 1) + TABLE[3]).tolist()


def unwritten(out):
    e = np.empty(3, np.int64)
    out[0] = e[1]


def test_reading_np_empty_before_writing_it_is_found():
    rep = gpusim.launch(unwritten, 1, 1, (np.zeros(1, np.int64),))
    assert any(isinstance(f, UninitializedRead) for f in rep.faults)


def reshaped(arr, shape, got):
    y = arr.reshape(shape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            got[i, j] = y[i, j]


def test_reshape_matches_numpy_including_minus_one():
    arr = np.arange(24)
    for shape in [(4, 6), (8, 3), (-1, 4), (2, -1)]:
        want = arr.reshape(shape)
        got = np.zeros(want.shape, arr.dtype)
        _run(reshaped, 1, 1, arr, shape, got)
        assert (got == want).all(), shape


def bad_reshape(arr, got):
    y = arr.reshape(5, 5)
    got[0] = y[0, 0]


def strided_reshape(arr, got):
    y = arr[::2].reshape(3, 2)
    got[0] = y[0, 0]


def test_a_reshape_numpy_refuses_is_a_fault():
    rep = gpusim.launch(bad_reshape, 1, 1, (np.arange(24), np.zeros(1, np.int64)))
    assert any(isinstance(f, KernelError) and "cannot reshape an array of size 24 into shape (5, 5)" in str(f)
               for f in rep.faults)
    rep = gpusim.launch(strided_reshape, 1, 1, (np.arange(12), np.zeros(1, np.int64)))
    assert any(isinstance(f, KernelError) and "not contiguous" in str(f) for f in rep.faults)


@cuda.jit(device=True)
def tail(x):
    return x[5:]


def returns_a_view(out):
    x = np.empty(10, np.int64)
    x[5] = 7
    x[6] = 8
    y = tail(x)
    out[0] = y[0] * 10 + y[1]


def test_a_device_function_returns_a_view():
    out = np.zeros(1, np.int64)
    _run(returns_a_view, 1, 1, out)
    assert out[0] == 78


def parts(values):
    i = cuda.grid(1)
    cuda.atomic.add(values.real, i, 1)
    values.imag[i] += 0.5


def test_the_parts_of_a_complex_array_are_views_an_atomic_can_update():
    n = 8
    got = np.arange(n) + np.arange(n) * 1j
    _run(parts, 1, n, got)
    want = np.arange(n) + 1 + (np.arange(n) + 0.5) * 1j
    assert (got == want).all()


def bytes_as_int(byte_arr, start, stop, out):
    out[0] = byte_arr[start:stop].view(np.int32)[0]
    w = byte_arr.view(np.uint16)
    out[1] = w[1]


def test_view_reads_the_bytes_as_another_type_as_numpy_does():
    b = np.arange(32, dtype=np.uint8)
    out = np.zeros(2, np.int64)
    for start in (0, 4, 12):
        _run(bytes_as_int, 1, 1, b, start, start + 4, out)
        assert out.tolist() == [b[start:start + 4].view(np.int32)[0], b.view(np.uint16)[1]]


def odd_bytes(byte_arr, out):
    out[0] = byte_arr[0:3].view(np.int32)[0]


def test_a_view_whose_bytes_do_not_divide_is_a_fault():
    rep = gpusim.launch(odd_bytes, 1, 1, (np.arange(8, dtype=np.uint8), np.zeros(1, np.int64)))
    assert any(isinstance(f, KernelError) and "3 bytes cannot be viewed as int32" in str(f) for f in rep.faults)
