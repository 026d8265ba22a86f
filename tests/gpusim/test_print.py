"""``print()`` in kernels: numba-cuda's printf formats, the order of the lines, the cap, and stdout for jit."""

from __future__ import annotations

import importlib

import numba
import numpy as np
from numba import cuda
from simkit import run_clean

import gpusim
from gpusim import PrintRecord

launch_module = importlib.import_module("gpusim.launch")


@cuda.jit
def formats(a, big):
    t = cuda.threadIdx.x
    print("t", t, a[t], a[t] > 1.0, numba.float32(0.1), big[0], (t, 2.5), (t,))
    print()


def test_each_value_is_formatted_as_numba_cudas_printf_does():
    # integers %lld (unsigned %llu), floats %f after widening to float64, bools True/False, string literals as
    # they are, tuples in parentheses: numba-cuda's printimpl
    a = np.array([0.5, 2.25], np.float64)
    big = np.array([2**64 - 1], np.uint64)
    report = run_clean(formats, 1, 2, a, big)
    lines = [r.text for r in report.output]
    assert lines == [
        "t 0 0.500000 False 0.100000 18446744073709551615 (0, 2.500000) (0,)", "",
        "t 1 2.250000 True 0.100000 18446744073709551615 (1, 2.500000) (1,)", "",
    ]
    assert all(isinstance(r, PrintRecord) for r in report.output)
    assert report.output[0].lineno > 0 and report.output_dropped == 0


@cuda.jit
def dims():
    print(cuda.threadIdx, cuda.blockIdx)


def test_dim3_values_print_as_three_numbers():
    report = run_clean(dims, (1, 2), (2, 1, 2))
    assert report.output[-1].text == "(1, 0, 1) (0, 1, 0)"
    assert report.output[-1].block == (0, 1, 0) and report.output[-1].thread == (1, 0, 1)


@cuda.jit
def two_prints(out):
    i = cuda.grid(1)
    if i % 3 == 0:
        print("first", i)
    print("second", i)
    if i % 2 == 0:
        print("third", i)


def test_lines_are_in_block_then_thread_then_print_order_across_chunks(monkeypatch):
    monkeypatch.setattr(launch_module, "CHUNK_LANES", 16)  # two blocks of 8 per chunk
    report = run_clean(two_prints, 5, 8, np.zeros(40))
    want = []
    for i in range(40):
        want += ([f"first {i}"] if i % 3 == 0 else []) + [f"second {i}"] + ([f"third {i}"] if i % 2 == 0 else [])
    assert [r.text for r in report.output] == want
    assert [r.block[0] * 8 + r.thread[0] for r in report.output] == [int(t.split()[1]) for t in want]


def test_output_is_capped_and_the_rest_counted():
    report = gpusim.launch(two_prints, 5, 8, (np.zeros(40),), max_output_lines=7, instrument=False)
    assert [r.text for r in report.output] == ["first 0", "second 0", "third 0", "second 1", "second 2",
                                               "third 2", "first 3"]
    total = sum(1 + (i % 3 == 0) + (i % 2 == 0) for i in range(40))
    assert report.output_dropped == total - 7


@cuda.jit
def chatty(out, n):
    i = cuda.grid(1)
    for k in range(n):
        print(i, k)
    out[i] = 1


def test_a_flood_of_prints_keeps_only_the_first_lines_in_bounded_memory():
    report = gpusim.launch(chatty, 4, 256, (np.zeros(1024), 200), max_output_lines=10, instrument=False)
    assert not report.faults
    assert [r.text for r in report.output] == [f"0 {k}" for k in range(10)]
    assert report.output_dropped == 1024 * 200 - 10


@cuda.jit
def many(x):
    v = x[0]
    print(v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v)


def test_more_than_32_items_print_the_format_itself_as_numba_cuda_does():
    report = run_clean(many, 1, 1, np.array([3], np.int32))
    assert report.output[0].text == " ".join(["%lld"] * 33)


def test_jit_launches_write_the_lines_to_stdout(capsys):
    gpusim.jit(two_prints)[1, 3](np.zeros(3))
    assert capsys.readouterr().out.splitlines() == ["first 0", "second 0", "third 0", "second 1", "second 2",
                                                      "third 2"]


@cuda.jit(device=True)
def noisy(x):
    print("in device", x)
    return x + 1


@cuda.jit
def calls_noisy(out):
    i = cuda.grid(1)
    if i == 1:
        out[i] = noisy(i)


def test_prints_in_device_functions_and_under_divergence():
    report = run_clean(calls_noisy, 1, 4, np.zeros(4, np.int64))
    assert [r.text for r in report.output] == ["in device 1"]
