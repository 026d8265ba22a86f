"""A variable the typing calls per-lane (it is assigned a per-lane value somewhere) can still hold one number
for every lane at run time, before that assignment: a condition on it, an ``x if c else y`` or an ``if``, then
gives one number, which must stay a number (never a 0-d array) for what reads it next — a shuffle, an index in
a branch, a store. The fuzzer's nesting seed 196 (valid numba-cuda) ended in gpusim's catch-all "array is
0-dimensional" there; it has a real data race, which is what gpusim must say. Expected values: a hand count."""

from __future__ import annotations

import numpy as np
from numba import cuda
from simkit import run_clean

from benchmarks.fuzz.execute import run_case
from benchmarks.fuzz.generate import generate


@cuda.jit
def shuffle_after_select(out):
    i = cuda.grid(1)
    t = 0
    x = 1.0 if t < 1 else 2.0          # t is 0 in every lane here; per lane below
    for _ in range(2):
        t = cuda.laneid
    x = cuda.shfl_down_sync(0xffffffff, x, 1)
    out[i] = x + t


@cuda.jit
def index_in_a_branch_after_if(out, a):
    i = cuda.grid(1)
    t = 0
    k = 3
    if t < 1:
        k = 5
    if i < 4:
        out[i] = a[k] + a[2 if t < 1 else 1]
    t = i


def test_a_shuffle_of_a_select_on_a_variable_per_lane_only_later():
    out = np.zeros(32, np.float32)
    run_clean(shuffle_after_select, 1, 32, out)
    assert out.tolist() == [1.0 + lane for lane in range(32)]


def test_an_index_from_an_if_on_such_a_variable_in_a_divergent_branch():
    out, a = np.zeros(8, np.float32), np.arange(8, dtype=np.float32) * 10
    run_clean(index_in_a_branch_after_if, 1, 8, out, a)
    assert out.tolist() == [70.0] * 4 + [0.0] * 4          # a[5] + a[2]


def test_the_fuzz_kernel_that_found_it_reports_its_race():
    outcome = run_case(generate(196))
    assert generate(196).family == "nesting"
    assert outcome.label == "fault:DataRace" and not outcome.suspect, (outcome.label, outcome.suspect)

