"""tui.breakdown: per-access rows are gpusim's ``report.counts.sites`` for the whole launch (they add up to the
launch metrics, even when the trace left blocks out); the trace gives single requests, elements and phases."""

from __future__ import annotations

import numpy as np
from numba import cuda

import gpusim
from tui import breakdown

TPB = 64


def strided_sum(out, a):
    s = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 64 + t
    s[t] = a[i]
    cuda.syncthreads()
    stride = 1
    while stride < 64:
        k = 2 * stride * t
        if k < 64:
            s[k] += s[k + stride]
        cuda.syncthreads()
        stride *= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def column_read(out, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i % 32, i // 32]    # neighbouring threads read elements a row apart: uncoalesced


def launch(kernel, grid, block, *args, **kw):
    return gpusim.launch(kernel, grid, block, args, **kw)


def test_shared_lines_add_up_to_the_launch_metrics():
    a = np.arange(256, dtype=np.float32)
    out = np.zeros(4, np.float32)
    report = launch(strided_sum, 4, TPB, out, a)
    assert np.allclose(out, a.reshape(4, 64).sum(axis=1))
    table = breakdown.by_line(report, "shared")
    for op in ("ld", "st"):
        rows = [r for r in table if r.kind == op]
        assert sum(r.wavefronts for r in rows) == report.metrics[
            f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"]
        assert sum(r.conflicts for r in rows) == report.metrics[
            f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"]
    assert any(r.conflicts for r in table)                # the interleaved tree conflicts
    assert {r.code for r in table} >= {"s[k] += s[k + stride]"}
    worst = breakdown.worst_bank_request(report)
    assert worst.wavefronts == max(worst.words_per_bank) >= 2
    assert worst.code == "s[k] += s[k + stride]"
    assert len(worst.words_per_bank) == 32


def test_global_lines_add_up_and_show_the_uncoalesced_read():
    a = np.arange(1024, dtype=np.float32).reshape(32, 32)
    out = np.zeros(64, np.float32)
    report = launch(column_read, 1, 64, out, a)
    table = breakdown.by_line(report, "global")
    for op in ("ld", "st"):
        rows = [r for r in table if r.kind == op]
        assert sum(r.sectors for r in rows) == report.metrics[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"]
        assert sum(r.requests for r in rows) == report.metrics[f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"]
    load = next(r for r in table if r.kind == "ld")
    store = next(r for r in table if r.kind == "st")
    assert load.array == "a" and load.sectors == 64 and load.ideal_sectors == 8
    assert load.efficiency == 0.125 and store.efficiency == 1.0
    assert load.used == 0.125 and load.code.startswith("out[i] = a[i % 32, i // 32]")


def test_lines_cover_every_block_when_the_trace_is_bounded():
    blocks = 96                                          # more than the 64 blocks the trace keeps by default
    a = np.arange(32 * blocks, dtype=np.float32).reshape(32, blocks)
    out = np.zeros(32 * blocks, np.float32)
    report = launch(column_read, blocks, 32, out, a)
    assert report.trace.truncated
    table = breakdown.by_line(report, "global")
    sites = [s for s in report.counts.sites if s["space"] == "global"]
    assert [(r.lineno, r.array, r.kind, r.requests, r.sectors, r.ideal_sectors) for r in table] == [
        (s["line"], s["array"], s["kind"], s["requests"], s["sectors"], s["ideal_sectors"]) for s in sites]
    load = next(r for r in table if r.kind == "ld")
    assert (load.requests, load.sectors, load.ideal_sectors) == (blocks, 32 * blocks, 4 * blocks)
    assert sum(r.sectors for r in table if r.kind == "ld") == report.metrics[
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]


def test_element_map_and_accessors_name_the_threads():
    a = np.arange(1024, dtype=np.float32).reshape(32, 32)
    out = np.zeros(64, np.float32)
    report = launch(column_read, 1, 64, out, a)
    em = breakdown.element_map(report, "a")
    assert em.shape == (32, 32) and em.reads.sum() == 64 and not em.writes.any()
    assert em.first_reader[1, 0] == 1 and em.first_reader[0, 1] == 32 and em.first_reader[0, 2] == -1
    who = breakdown.accessors(report, "a", (1, 0))
    assert who.readers == ["block 0 thread 1"] and who.writers == [] and who.accesses == 1
    assert (who.reader_count, who.writer_count) == (1, 0)


def every_thread_reads_a0(out, a):
    out[cuda.grid(1)] = a[0]


def test_accessors_name_the_first_readers_and_count_the_rest():
    a = np.ones(1, np.float32)
    out = np.zeros(64, np.float32)
    report = launch(every_thread_reads_a0, 2, 32, out, a)
    who = breakdown.accessors(report, "a", (0,), limit=8)
    assert who.reader_count == 64 and len(who.readers) == 8        # 64 threads read a[0]; 8 are named
    assert who.readers[0] == "block 0 thread 0" and who.readers[7] == "block 0 thread 7"


def test_phase_view_splits_at_barriers():
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(1, np.float32)
    report = launch(strided_sum, 1, TPB, out, a)
    first = breakdown.phase_view(report, 0, 0, "s")
    assert first.phases == 8 and first.starts_after is None and first.ends_at is not None
    assert first.writes.sum() == 64 and first.reads.sum() == 0
    assert list(first.writer[:4]) == [0, 1, 2, 3]
    second = breakdown.phase_view(report, 0, 1, "s")
    assert second.starts_after == first.ends_at
    assert second.writes.sum() == 32 and second.reads.sum() == 64   # s[k] += s[k + 1], k even
    assert breakdown.phase_arrays(report)[0] == "s"


def test_nothing_recorded_gives_none_not_an_error():
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(1, np.float32)
    report = launch(strided_sum, 1, TPB, out, a, trace=False)
    assert breakdown.by_line(report, "shared")            # the counts come without the trace
    assert breakdown.worst_bank_request(report) is None
    assert breakdown.phase_view(report, 0, 0, "s") is None
    em = breakdown.element_map(report, "a")
    assert em.reads is not None and em.first_reader is None


def test_without_counts_there_are_no_lines():
    a = np.arange(64, dtype=np.float32)
    report = launch(strided_sum, 1, TPB, np.zeros(1, np.float32), a, instrument=False)
    assert report.counts is None
    assert breakdown.by_line(report, "shared") is None and breakdown.by_line(report, "global") is None
