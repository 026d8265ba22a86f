"""Per-thread and per-element access counts (``report.counts``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda, float32

import gpusim
from gpusim.observe.counts import add_element_counts, add_thread_counts


@cuda.jit
def stencil(a, out):
    i = cuda.grid(1)
    if 0 < i < a.size - 1:
        out[i] = a[i - 1] + a[i] + a[i + 1]


@cuda.jit
def rows_sum(m, out):
    r = cuda.grid(1)
    if r < m.shape[0]:
        acc = float32(0.0)
        for c in range(m.shape[1]):
            acc += m[r, c]
        out[r] = acc


@cuda.jit
def count_ones(flags, total):
    i = cuda.grid(1)
    if i < flags.size and flags[i] == 1:
        cuda.atomic.add(total, 0, 1)


@cuda.jit
def with_local(a, out):
    i = cuda.grid(1)
    tmp = cuda.local.array(3, float32)
    for k in range(3):
        tmp[k] = a[i] * k
    out[i] = tmp[0] + tmp[1] + tmp[2]


def test_reads_and_writes_per_thread_and_per_element():
    a = np.arange(10, dtype=np.float32)
    r = gpusim.launch(stencil, 1, 16, (a, np.zeros_like(a)))
    c = r.counts
    assert c.reads_per_thread("global", "a").tolist() == [0] + [3] * 8 + [0] * 7
    assert c.writes_per_thread("global").tolist() == [0] + [1] * 8 + [0] * 7
    assert c.reads_per_thread("global", "out").sum() == 0
    assert c.element_reads("a").tolist() == [1, 2, 3, 3, 3, 3, 3, 3, 2, 1]
    assert c.element_writes("out").tolist() == [0] + [1] * 8 + [0]
    assert c.totals["global_ld"] == 24 and c.totals["global_st"] == 8
    with pytest.raises(KeyError):
        c.reads_per_thread("global", "nope")


def test_element_counts_keep_the_array_shape_and_loops_count_every_access():
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    r = gpusim.launch(rows_sum, 1, 4, (m, np.zeros(3, np.float32)))
    assert r.counts.element_reads("m").shape == (3, 4)
    assert (r.counts.element_reads("m") == 1).all()
    assert r.counts.reads_per_thread("global", "m").tolist() == [4, 4, 4, 0]


def test_atomics_are_reads_and_writes():
    flags = np.array([1, 0, 1, 1, 0], np.int32)
    total = np.zeros(1, np.int32)
    r = gpusim.launch(count_ones, 1, 8, (flags, total))
    assert total[0] == 3
    c = r.counts
    assert c.totals["global_atom"] == 3
    assert c.element_reads("total").tolist() == [3] and c.element_writes("total").tolist() == [3]
    assert c.writes_per_thread("global", "total").tolist() == [1, 0, 1, 1, 0, 0, 0, 0]


def test_local_arrays_count_per_thread_but_not_per_element():
    a = np.arange(8, dtype=np.float32)
    r = gpusim.launch(with_local, 1, 8, (a, np.zeros_like(a)))
    c = r.counts
    assert c.totals["local_st"] == 24 and c.totals["local_ld"] == 24
    assert c.writes_per_thread("local").tolist() == [3] * 8
    with pytest.raises(KeyError):
        c.element_reads("tmp")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 300), min_size=1, max_size=200))
def test_element_count_adds_every_repeat(idx):
    acc = add_element_counts(np.zeros(301, np.uint8), np.array(idx, np.int64))
    expected = np.zeros(301, np.int32)
    np.add.at(expected, idx, 1)
    assert acc.tolist() == expected.tolist()


@settings(max_examples=100, deadline=None)
@given(st.sets(st.integers(0, 500), max_size=200))
def test_thread_count_adds_one_per_lane(lanes):
    gtid = np.array(sorted(lanes), np.int64)
    acc = add_thread_counts(np.zeros(501, np.uint8), gtid)
    assert np.flatnonzero(acc).tolist() == gtid.tolist() and acc.max(initial=0) <= 1


@cuda.jit
def reread_in_a_loop(a, out):
    t = cuda.threadIdx.x
    acc = 0.0
    for _ in range(3):          # every thread reads a[0] three times and a[t] once per pass
        acc += a[0] + a[t]
    out[t] = acc


def test_element_readers_count_distinct_threads_while_element_reads_count_accesses():
    a = np.arange(4, dtype=np.float64)
    out = np.zeros(4)
    report = gpusim.launch(reread_in_a_loop, 1, 4, (a, out))
    assert not report.faults
    counts = report.counts
    np.testing.assert_array_equal(counts.element_reads("a"), [3 * 4 + 3, 3, 3, 3])
    np.testing.assert_array_equal(counts.element_readers("a"), [4, 1, 1, 1])
    np.testing.assert_array_equal(counts.element_writers("out"), [1, 1, 1, 1])


@cuda.jit
def coalesced_and_strided(a, out):
    i = cuda.grid(1)
    x = a[i]             # coalesced: 4 sectors per 32 float32 lanes
    y = a[(i * 2) % 64]  # stride 2: 8 sectors per request, half of each sector wasted
    out[i] = x + y


def test_access_sites_give_each_source_access_its_coalescing_efficiency():
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    report = gpusim.launch(coalesced_and_strided, 2, 32, (a, out))
    assert not report.faults
    sites = {(s["array"], s["kind"], s["line"]): s for s in report.counts.sites}
    lines = sorted({line for (_, _, line) in sites})
    first = sites[("a", "ld", lines[0])]
    second = sites[("a", "ld", lines[1])]
    assert (first["requests"], first["sectors"], first["efficiency"]) == (2, 8, 1.0)
    assert (second["requests"], second["sectors"], second["efficiency"]) == (2, 16, 0.5)
    assert sites[("out", "st", lines[2])]["efficiency"] == 1.0


def test_distinct_counts_give_way_when_a_launch_touches_too_much(monkeypatch):
    import gpusim.observe.counts as counts_module

    monkeypatch.setattr(counts_module, "MAX_PAIRS", 10)
    report = gpusim.launch(reread_in_a_loop, 1, 4, (np.arange(4, dtype=np.float64), np.zeros(4)))
    assert report.counts.element_readers("a") is None
    np.testing.assert_array_equal(report.counts.element_reads("a"), [15, 3, 3, 3])  # lane-access counts stay
