"""``cuda.atomic.inc``/``dec`` on uint64 near 2^64, on both paths of ``gpusim.runtime.memory.apply_atomic``: the
rounds (few lanes per element) and the compiled one-lane-at-a-time loop (more than ``MAX_ROUNDS`` lanes on one
element), and through a kernel.

Expected values are CUDA's rules (the CUDA C++ Programming Guide's atomicInc and atomicDec), computed here on
Python integers, the lanes in lane order: a value computed through float64 (exact only to 2^53) breaks them.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import cuda
from simkit import run_clean

from gpusim.runtime import memory as M

TOP = 2**64 - 1


def cuda_inc(old: int, val: int) -> int:
    return 0 if old >= val else old + 1          # ((old >= val) ? 0 : (old+1))


def cuda_dec(old: int, val: int) -> int:
    return val if (old == 0 or old > val) else old - 1   # (((old == 0) || (old > val)) ? val : (old-1))


RULE = {"inc": cuda_inc, "dec": cuda_dec}


def serial(op: str, start: int, vals: list[int]) -> tuple[list[int], int]:
    """The old value each lane reads and the element's last value, lanes on one element in lane order."""
    olds, cur = [], start
    for v in vals:
        olds.append(cur)
        cur = RULE[op](cur, v)
    return olds, cur


CASES = [  # (op, the element's first value, the lanes' value)
    ("inc", TOP - 6, TOP - 1),     # counts up to 2^64 - 2, then wraps to 0
    ("inc", TOP - 3, TOP),         # val = 2^64 - 1: old + 1 reaches 2^64 - 1, then 0
    ("inc", TOP, TOP - 2),         # old > val: 0 at once
    ("dec", 3, TOP),               # down to 0, then val = 2^64 - 1, 2^64 - 2, ...
    ("dec", TOP, TOP - 4),         # old > val: val at once, then down
    ("dec", TOP - 2, TOP - 1),     # old < val: down from 2^64 - 3
]


@pytest.fixture
def paths(monkeypatch):
    """Which path each call took: 'rounds' or 'loop'."""
    taken = []
    rounds, loop = M._atomic_rounds, M._atomic_loop

    def spy_rounds(*args):
        taken.append("rounds")
        return rounds(*args)

    def spy_loop(*args):
        taken.append("loop")
        return loop(*args)

    monkeypatch.setattr(M, "_atomic_rounds", spy_rounds)
    monkeypatch.setattr(M, "_atomic_loop", spy_loop)
    return taken


@pytest.mark.parametrize("lanes, path", [(9, "rounds"), (M.MAX_ROUNDS + 44, "loop")])
@pytest.mark.parametrize("op, start, val", CASES)
def test_uint64_inc_and_dec_follow_cudas_rules_near_2_to_the_64(paths, op, start, val, lanes, path):
    data = np.array([5, start, 7], np.uint64)
    elems = np.ones(lanes, np.int64)
    vals = np.full(lanes, val, np.uint64)
    got_olds = M.apply_atomic(op, data, elems, vals, None)
    want_olds, want_last = serial(op, start, [val] * lanes)
    assert paths == [path]                  # the path is chosen by lanes per element, whatever the dtype
    assert [int(x) for x in got_olds] == want_olds
    assert int(data[1]) == want_last and int(data[0]) == 5 and int(data[2]) == 7


@pytest.mark.parametrize("lanes", [9, M.MAX_ROUNDS + 44])
def test_uint64_inc_and_dec_lanes_with_different_values_in_lane_order(lanes):
    rng = np.random.default_rng(3)
    vals = [int(v) for v in TOP - rng.integers(0, 8, lanes, dtype=np.uint64)]
    for op, start in (("inc", TOP - 5), ("dec", 2)):
        data = np.array([start], np.uint64)
        got = M.apply_atomic(op, data, np.zeros(lanes, np.int64), np.array(vals, np.uint64), None)
        want_olds, want_last = serial(op, start, vals)
        assert [int(x) for x in got] == want_olds and int(data[0]) == want_last, op


@cuda.jit
def count_up_and_down(counters, olds, limit):
    i = cuda.grid(1)
    olds[0, i] = cuda.atomic.inc(counters, 0, limit)
    olds[1, i] = cuda.atomic.dec(counters, 1, limit)


@pytest.mark.parametrize("threads", [40, 1024])
def test_a_kernels_uint64_counters_wrap_where_cuda_says(threads):
    limit = TOP - 3
    counters = np.array([TOP - 10, 4], np.uint64)
    olds = np.zeros((2, threads), np.uint64)
    run_clean(count_up_and_down, 1, threads, counters, olds, numba.uint64(limit))
    # the GPU's order of the lanes is not defined: every lane reads one value of the sequence, once
    for row, (op, start) in enumerate((("inc", TOP - 10), ("dec", 4))):
        want_olds, want_last = serial(op, start, [limit] * threads)
        assert sorted(int(x) for x in olds[row]) == sorted(want_olds), op
        assert int(counters[row]) == want_last, op
