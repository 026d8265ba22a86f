"""Tests for puzzles/stats.py: RunStats from the reports of a case's launches."""

from __future__ import annotations

import numpy as np
from puzzle_fixtures import FakeCounts

from gpusim.observe.events import ArrayInfo, LaunchInfo
from gpusim.report import LaunchReport
from puzzles.stats import LD_SECTORS as LD
from puzzles.stats import measure, stats_to_dict


def _report(threads: int, reads: dict, writes: dict, *, totals=None, ideal=None, metrics=None,
            shared_bytes=0, arrays=None, flops=None, counts=True) -> LaunchReport:
    info = LaunchInfo("k", "k.py", (1, 1, 1), (threads, 1, 1), 0)
    names = sorted(set(reads) | set(writes))
    arrays = arrays if arrays is not None else [
        ArrayInfo(i, n, "global", np.dtype(np.float32), (threads,), 0) for i, n in enumerate(names)]
    report = LaunchReport(launch=info, arrays=arrays, shared_bytes_per_block=shared_bytes,
                          metrics=dict({LD: 1.0} if metrics is None else metrics), flops=flops or {})
    if counts:
        report.counts = FakeCounts(threads, reads, writes, totals or {}, ideal or {})
    return report


def test_per_thread_counts_take_the_max_over_launches_and_totals_add_up():
    first = _report(4, {"a": 2}, {"tmp": 1}, totals={"global_atom": 3, "shared_ld": 0},
                    ideal={"ld": 2, "st": 1}, metrics={LD: 5.0})
    second = _report(8, {"tmp": 1, "b": 1}, {"out": 1}, totals={"shared_atom": 1},
                     ideal={"ld": 3, "st": 1}, metrics={LD: 7.0}, shared_bytes=256)
    m = measure([first, second])
    s = m.stats
    assert m.complete and m.missing == []
    assert s.global_reads_per_thread == 2 and s.global_writes_per_thread == 1
    assert s.reads_per_thread_by_array == {"a": 2, "tmp": 1, "b": 1, "out": 0}
    assert s.writes_per_thread_by_array == {"tmp": 1, "out": 1, "a": 0, "b": 0}
    assert s.atomics == 4 and s.launches == 2 and s.shared_bytes_per_block == 256
    assert s.global_load_sectors == 12 and s.ideal_load_sectors == 5 and s.ideal_store_sectors == 2
    assert s.uses_shared                          # the shared atomic of the second launch


def test_shared_use_seen_from_arrays_or_counts():
    shared = ArrayInfo(0, "buf", "shared", np.dtype(np.int32), (8,), 0)
    assert measure([_report(4, {}, {}, arrays=[shared])]).stats.uses_shared
    assert measure([_report(4, {}, {}, totals={"shared_st": 4})]).stats.uses_shared


def test_flops_count_fma_twice():
    report = _report(4, {}, {}, flops={"float32": {"add": 3, "fma": 2}, "float64": {"mul": 1}})
    assert measure([report]).stats.flops == 3 + 4 + 1


def test_missing_counts_or_metrics_make_the_stats_incomplete():
    m = measure([_report(4, {"a": 1}, {}, counts=False, metrics={})])
    assert not m.complete
    assert any("no access counts" in r for r in m.missing)
    assert any("no memory metrics" in r for r in m.missing)
    assert m.stats.global_reads_per_thread == 0


def test_broken_counts_degrade_instead_of_raising():
    report = _report(4, {"a": 1}, {})
    report.counts = object()
    m = measure([report])
    assert not m.complete and "AttributeError" in m.missing[0]


def test_stats_to_dict_is_plain():
    d = stats_to_dict(measure([_report(4, {"a": 1}, {"out": 1})]).stats)
    assert d["reads_per_thread_by_array"] == {"a": 1, "out": 0} and isinstance(d["metrics"], dict)
