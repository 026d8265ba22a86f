"""Functions defined inside kernels and device functions, *args and default values in device functions, as
numba-cuda compiles them (closures capture constants only). Expected values are Python's, worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import gpusim
from gpusim import KernelCompileError

OFFSET = 100


@cuda.jit(device=True)
def apply(func, *args):
    return func(*args)


@cuda.jit(device=True)
def twice(func, x):
    return func(func(x))


def kernel_closures(out, x):
    y = 10

    def add_y(z, bonus=5):
        return y + z + bonus + OFFSET

    def calls_inner(v):
        def inner(w):
            return w * 3

        return inner(v) + 1

    out[0] = add_y(x[0])
    out[1] = apply(add_y, x[0], 7)
    out[2] = apply(add_y, x[0])
    out[3] = twice(calls_inner, x[0])
    out[4] = add_y(1, bonus=0)


def test_nested_functions_capture_constants_take_defaults_and_pass_as_values():
    out = np.zeros(5, np.int64)
    x = np.array([4], np.int64)
    r = gpusim.launch(kernel_closures, 1, 1, (out, x))
    r.raise_for_faults()
    # by hand: 10 + 4 + 5 + 100; 10 + 4 + 7 + 100; the default again; inner twice: 4*3 + 1 = 13, 13*3 + 1;
    # bonus given by keyword: 10 + 1 + 0 + 100
    assert out.tolist() == [119, 121, 119, 40, 111]


@cuda.jit(device=True)
def count_args(*args):
    n = len(args)
    if n == 1:
        return args[0]
    elif n == 2:
        return args[0] + args[1]
    return -1


def kernel_varargs(out):
    out[0] = count_args(5)
    out[1] = count_args(5, 6)
    out[2] = count_args()


def test_star_args_are_a_tuple_whose_length_decides_branches_at_compile_time():
    out = np.zeros(3, np.int64)
    gpusim.launch(kernel_varargs, 1, 1, (out,)).raise_for_faults()
    assert out.tolist() == [5, 11, -1]


def kernel_captures_a_variable(out, x):
    y = x[0]

    def add_y(z):
        return y + z

    out[0] = add_y(1)


def test_a_closure_over_a_runtime_value_is_refused_at_the_capture():
    with pytest.raises(KernelCompileError, match="captures 'y', which is not a constant"):
        gpusim.launch(kernel_captures_a_variable, 1, 1, (np.zeros(1, np.int64), np.zeros(1, np.int64)))
