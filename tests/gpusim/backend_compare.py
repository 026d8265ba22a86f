"""Comparing two launches' reports field by field: what the differential tests of the compiled back end
assert is identical to the lanes back end's (outputs, faults with their messages, metrics, counts, flops,
trace, arrays)."""

from __future__ import annotations

import numpy as np


def same_array(x, y) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    if x.dtype.kind == "f":
        return bool(np.array_equal(x.view(f"u{x.itemsize}"), y.view(f"u{y.itemsize}")) or
                    np.array_equal(x, y, equal_nan=True))
    return bool(np.array_equal(x, y))


def fault_record(f) -> tuple:
    return (type(f).__name__, tuple(sorted((k, repr(v)) for k, v in f.to_dict().items())))


def report_differences(a, b) -> list[str]:
    """Where report ``b`` differs from report ``a`` (empty: identical)."""
    out = []
    fa, fb = [fault_record(f) for f in a.faults], [fault_record(f) for f in b.faults]
    if fa != fb:
        out.append(f"faults differ:\n  {fa}\n  {fb}")
    if a.metrics != b.metrics:
        keys = sorted(set(a.metrics) | set(b.metrics))
        out.append("metrics differ: " + ", ".join(f"{k}: {a.metrics.get(k)} vs {b.metrics.get(k)}" for k in keys
                                                  if a.metrics.get(k) != b.metrics.get(k)))
    if a.steps != b.steps:
        out.append(f"steps differ: {a.steps} vs {b.steps}")
    if [(r.block, r.thread, r.text) for r in a.output] != [(r.block, r.thread, r.text) for r in b.output] \
            or a.output_dropped != b.output_dropped:
        out.append("output differs")
    if a.flops != b.flops:
        out.append(f"flops differ: {a.flops} vs {b.flops}")
    if a.arrays != b.arrays:
        out.append(f"arrays differ: {a.arrays} vs {b.arrays}")
    if a.shared_bytes_per_block != b.shared_bytes_per_block:
        out.append(f"shared bytes differ: {a.shared_bytes_per_block} vs {b.shared_bytes_per_block}")
    ca, cb = a.counts, b.counts
    if (ca is None) != (cb is None):
        out.append("counts: one report has none")
    elif ca is not None:
        for attr in ("totals", "coalescing", "ideal_sectors", "sites", "distinct"):
            if getattr(ca, attr) != getattr(cb, attr):
                out.append(f"counts.{attr} differ: {getattr(ca, attr)} vs {getattr(cb, attr)}")
        for info in a.arrays:
            for space in ("global", "shared", "local", "const"):
                if info.space != space:
                    continue
                for fn in ("reads_per_thread", "writes_per_thread"):
                    try:
                        same = same_array(getattr(ca, fn)(space, info.name), getattr(cb, fn)(space, info.name))
                    except KeyError as e:
                        same = False
                        out.append(str(e))
                    if not same:
                        out.append(f"counts.{fn}({space}, {info.name}) differ")
            if info.space != "local":
                for fn in ("element_reads", "element_writes", "element_readers", "element_writers"):
                    try:
                        x, y = getattr(ca, fn)(info.name), getattr(cb, fn)(info.name)
                    except KeyError as e:
                        out.append(str(e))
                        continue
                    if (x is None) != (y is None) or (x is not None and not same_array(x, y)):
                        out.append(f"counts.{fn}({info.name}) differ")
    ta, tb = a.trace, b.trace
    if (ta is None) != (tb is None):
        out.append("trace: one report has none")
    elif ta is not None:
        if not same_array(ta.table, tb.table):
            out.append(f"trace tables differ ({len(ta.table)} vs {len(tb.table)} rows)")
        if (ta.recorded, ta.dropped) != (tb.recorded, tb.dropped):
            out.append(f"trace counts differ: {(ta.recorded, ta.dropped)} vs {(tb.recorded, tb.dropped)}")
        ba = [(s, tuple(x.tolist()), line) for s, x, line in ta._barriers]
        bb = [(s, tuple(x.tolist()), line) for s, x, line in tb._barriers]
        if ba != bb:
            out.append("trace barriers differ")
        if ta.arrays != tb.arrays:
            out.append("trace arrays differ")
        if (ta.values_kept, ta.values_dropped) != (tb.values_kept, tb.values_dropped) or \
                len(ta._snapshots) != len(tb._snapshots) or \
                any(x[0] != y[0] or not all(same_array(p, q) for p, q in zip(x[1:], y[1:]))
                    for x, y in zip(ta._snapshots, tb._snapshots)):
            out.append("trace shared values differ")
    return out
