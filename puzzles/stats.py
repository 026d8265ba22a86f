"""Turning the ``LaunchReport``s of one test case into ``RunStats``, the numbers constraints and stars judge.

Across the launches of a case: per-thread counts take the maximum over launches (thread 5 of one launch is not
thread 5 of the next), totals and metrics are summed, shared memory per block takes the maximum.

The numbers come from the simulator's instrumentation: ``report.counts`` (``gpusim.metrics.AccessCounts``)
and ``report.metrics`` (Nsight Compute names). Where a report lacks them, the stats are built from what exists
and ``measure`` says they are incomplete, with the reason, so the checker never judges a rule on guesses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .model import RunStats

LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
ST_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
BANK_CONFLICTS = (
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
)
FLOPS_PER_OP = {"fma": 2}   # a fused multiply-add is two floating-point operations; every other op is one


@dataclass
class Measurement:
    """``RunStats`` for one case, and whether every number in it was actually measured."""

    stats: RunStats
    complete: bool
    missing: list[str] = field(default_factory=list)   # what could not be measured, and why


def measure(reports: Sequence[Any]) -> Measurement:
    """Build ``RunStats`` from the reports of every launch of one case, in launch order."""
    missing: list[str] = []
    reads = writes = 0
    reads_by: dict[str, int] = {}
    writes_by: dict[str, int] = {}
    totals: dict[str, int] = {}
    ideal = {"ld": 0, "st": 0}
    metrics: dict[str, float] = {}
    uses_shared = False
    for report in reports:
        for key, value in (report.metrics or {}).items():
            metrics[key] = metrics.get(key, 0.0) + float(value)
        uses_shared = uses_shared or any(a.space == "shared" for a in report.arrays or ())
        counts = report.counts
        if counts is None:
            _note(missing, "the simulator reported no access counts")
            continue
        try:
            reads = max(reads, _max(counts.reads_per_thread("global")))
            writes = max(writes, _max(counts.writes_per_thread("global")))
            for name in _global_names(report):
                try:
                    r, w = counts.reads_per_thread("global", name), counts.writes_per_thread("global", name)
                except KeyError:      # an array the kernel never touched may have no counts
                    continue
                reads_by[name] = max(reads_by.get(name, 0), _max(r))
                writes_by[name] = max(writes_by.get(name, 0), _max(w))
            for key, value in (counts.totals or {}).items():
                totals[key] = totals.get(key, 0) + int(value)
            for key in ideal:
                ideal[key] += int((counts.ideal_sectors or {}).get(key, 0))
        except Exception as e:  # instrumentation still being built: degrade, and say so
            _note(missing, f"the access counts could not be read ({type(e).__name__}: {e})")
    if reports and LD_SECTORS not in metrics:
        _note(missing, "the simulator reported no memory metrics")
    uses_shared = uses_shared or any(totals.get(k, 0) for k in ("shared_ld", "shared_st", "shared_atom"))
    stats = RunStats(
        global_reads_per_thread=reads,
        global_writes_per_thread=writes,
        reads_per_thread_by_array=reads_by,
        writes_per_thread_by_array=writes_by,
        shared_bytes_per_block=max((int(r.shared_bytes_per_block or 0) for r in reports), default=0),
        uses_shared=bool(uses_shared),
        atomics=totals.get("global_atom", 0) + totals.get("shared_atom", 0),
        global_load_sectors=int(metrics.get(LD_SECTORS, 0)),
        global_store_sectors=int(metrics.get(ST_SECTORS, 0)),
        global_load_requests=int(metrics.get(LD_REQUESTS, 0)),
        global_store_requests=int(metrics.get(ST_REQUESTS, 0)),
        ideal_load_sectors=ideal["ld"],
        ideal_store_sectors=ideal["st"],
        shared_bank_conflicts=int(sum(metrics.get(k, 0) for k in BANK_CONFLICTS)),
        launches=len(reports),
        flops=sum(_flops(r) for r in reports),
        metrics=metrics,
    )
    return Measurement(stats=stats, complete=not missing, missing=missing)


def stats_to_dict(stats: RunStats) -> dict:
    """A JSON-safe dict of ``RunStats``."""
    out = {}
    for name in RunStats.__dataclass_fields__:
        value = getattr(stats, name)
        out[name] = dict(value) if isinstance(value, Mapping) else value
    return out


def _max(per_thread: Any) -> int:
    values = np.asarray(per_thread)
    return int(values.max()) if values.size else 0


def _global_names(report: Any) -> list[str]:
    return sorted({a.name for a in report.arrays or () if a.space == "global"})


def _flops(report: Any) -> int:
    total = 0
    for per_op in (report.flops or {}).values():
        for op, count in per_op.items():
            total += FLOPS_PER_OP.get(op, 1) * int(count)
    return total


def _note(missing: list[str], reason: str) -> None:
    if reason not in missing:
        missing.append(reason)
