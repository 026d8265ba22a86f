"""Atomics computed in rounds (``gpusim.runtime.memory._atomic_rounds``, the path of an atomic whose lanes meet
on few elements) and the compiled one-lane-at-a-time loop both give the bits and old values of the
definition: the lanes serialised in lane order, each doing its read-modify-write exactly (Python integers
wrapped to the element type; float operations in the element type). Random elements with many collisions,
wrapping integers, NaNs and infinities, every operation."""

from __future__ import annotations

import numpy as np
import pytest

from gpusim.runtime import memory as M

INT_OPS = ["add", "sub", "max", "min", "exch", "inc", "dec", "and", "or", "xor", "cas", "nanmax", "nanmin"]
FLOAT_OPS = ["add", "sub", "max", "min", "exch", "cas", "nanmax", "nanmin"]


def case(dtype, rng, lanes, size):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        pool = np.array([0.0, -0.0, 1.5, -2.25, 3.0, np.nan, np.inf, -np.inf, 1e30, -7.0], dt)
        data, vals, cmps = (rng.choice(pool, n) for n in (size, lanes, lanes))
    else:
        info = np.iinfo(dt)
        pool = np.array([info.min, info.max, 0, 1, 2, 3, info.max - 1, info.min + 1], dt)
        data, vals, cmps = (rng.choice(pool, n) for n in (size, lanes, lanes))
    cmps[: lanes // 2] = data[rng.integers(0, size, lanes // 2)]  # some compare-and-swaps succeed
    elems = rng.integers(0, size, lanes).astype(np.int64)
    return data, elems, vals, cmps


def float_step(op, old, v, c):
    """One lane's float atomic: what it stores."""
    if op in ("add", "sub"):
        return old + v if op == "add" else old - v
    if op in ("max", "min"):
        return v if (v > old if op == "max" else v < old) else old
    if op == "exch":
        return v
    if op == "cas":
        return v if old == c else old
    better = v > old if op == "nanmax" else v < old
    return v if better or (np.isnan(old) and not np.isnan(v)) else old


def serial(op, data, elems, vals, cmps):
    """The definition, one lane at a time."""
    dt = data.dtype
    olds = np.empty(elems.shape, dt)
    for k, e in enumerate(elems):
        old, v, c = data[e], vals[k], cmps[k]
        olds[k] = old
        if dt.kind == "f":
            new = float_step(op, old, v, c)
            data[e] = new
            continue
        o, w = int(old), int(v)
        new = {"add": o + w, "sub": o - w, "max": max(o, w), "min": min(o, w), "exch": w, "nanmax": max(o, w),
               "nanmin": min(o, w), "inc": 0 if o >= w else o + 1, "dec": w if o == 0 or o > w else o - 1,
               "and": o & w, "or": o | w, "xor": o ^ w, "cas": w if o == int(c) else o}[op]
        data[e] = np.array(new & (2**64 - 1), np.uint64).astype(dt)  # the low bits, as the GPU stores them
    return olds


def same(a, b) -> bool:
    """The same values bit for bit, every NaN counting as one (a NaN's sign depends on the instruction)."""
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        return bool((nan == np.isnan(b)).all()) and a[~nan].tobytes() == b[~nan].tobytes()
    return a.tobytes() == b.tobytes()


def compiled(op, data, elems, vals, cmps):
    olds = np.empty(elems.shape, data.dtype)
    loop = M._atomic_float if data.dtype.kind == "f" else M._atomic_int
    loop(data, elems, vals, cmps, M.OPS[op], olds)
    return olds


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64"])
def test_rounds_and_the_compiled_loop_match_the_lanes_one_at_a_time(dtype):
    rng = np.random.default_rng(7)
    ops = FLOAT_OPS if np.dtype(dtype).kind == "f" else INT_OPS
    for op in ops:
        for lanes, size in ((1, 1), (32, 1), (40, 3), (64, 200), (7, 7), (600, 2)):  # the last: compiled loop
            data, elems, vals, cmps = case(dtype, rng, lanes, size)
            cmp = cmps if op == "cas" else None  # apply_atomic gives the other ops a comparand of zeros
            zeros = cmps if op == "cas" else np.zeros_like(vals)
            want_data = data.copy()
            with np.errstate(all="ignore"):
                want_old = serial(op, want_data, elems, vals, zeros)
            got_data = data.copy()
            got_old = M.apply_atomic(op, got_data, elems, vals, cmp)
            assert same(got_data, want_data), (op, lanes, size)
            assert same(got_old, want_old), (op, lanes, size)
            if dtype == "uint64" and op in ("inc", "dec"):
                continue  # the compiled loop computes old +/- 1 in float64 there (numba's uint64 +/- int64)
            loop_data = data.copy()
            loop_old = compiled(op, loop_data, elems, vals, zeros)
            assert same(loop_data, want_data), (op, lanes, size)
            assert same(loop_old, want_old), (op, lanes, size)


def test_an_element_updated_by_more_lanes_than_the_rounds_allow_uses_the_compiled_loop(monkeypatch):
    calls = []
    real = M._atomic_int

    def spy(*args):
        calls.append(args[1].size)
        return real(*args)

    monkeypatch.setattr(M, "_atomic_int", spy)
    data = np.zeros(4, np.int64)
    n = M.MAX_ROUNDS
    M.apply_atomic("add", data, np.zeros(n, np.int64), np.ones(n, np.int64), None)
    assert calls == [] and data[0] == n
    M.apply_atomic("add", data, np.zeros(n + 1, np.int64), np.ones(n + 1, np.int64), None)
    assert calls == [n + 1] and data[0] == 2 * n + 1
