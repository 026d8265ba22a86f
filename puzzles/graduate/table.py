"""Graduate mode's results as rows, and the rows as a terminal table, a Markdown table and JSON.

A ``Row`` is one puzzle on one back end. Its numbers and where they come from:

* **correct**: the puzzle's own cases on the GPU, each compared with the spec as the checker compares
  (``cases_passed`` of ``cases_total``), and the benchmark case's outputs checked the same way in a CPU job
  (``bench_check``: "pass", "FAIL: ...", or why it was not checked).
* **time**: the median of the timed samples of the benchmark case, all its launches (``timing.py``).
* **GB/s**: the case's compulsory bytes (``workload.py``) / time; **GFLOP/s**: gpusim's FLOPs for the same
  launch / time.
* **% of peak**: for a memory-bound launch (gpusim's roofline says which), GB/s over the device's copy
  bandwidth measured in the same run; for a compute-bound one, FLOP/s over the FLOP/s roof for its dtypes.
* **sim estimate**: gpusim's ``report.estimate`` for the same launch, summed over its steps (its time model,
  ``gpusim.timing_model``: latency, DRAM, L2, block starts, shared memory, atomics, FLOPs); **meas/est**:
  time / estimate, about 1 when the model is right (docs/graduate.md shows how close it is, puzzle by puzzle).
  An estimate marked ``~`` comes from a sample of the launch's blocks (``gpusim.sampling``: a launch too big
  to simulate whole within the job's budget); the notes say how many blocks ran, the JSON has
  ``estimate_sample`` (blocks, of, fraction).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .estimates import size_label


@dataclass
class Row:
    number: int
    slug: str
    backend: str
    cases_passed: int = 0
    cases_total: int = 0
    failure: str = ""                    # the first wrong case, a compile error, a fault
    bench: str = ""                      # the benchmark case's name
    size: str = ""                       # "2^26", "max"
    bench_note: str = ""
    bench_check: str = ""                # "pass", "FAIL: ...", "not checked: ..."
    time_s: float | None = None
    ci_s: tuple[float, float] | None = None
    ungated_s: float | None = None
    samples: int = 0
    bytes: int = 0                       # compulsory
    flops: int | None = None             # gpusim's count for the same launch
    bound: str = ""                      # gpusim's roofline: "memory" / "compute"
    estimate_s: float | None = None
    estimate_note: str = ""              # why there is no estimate
    estimate_sample: dict | None = None  # an estimate from a sample of the blocks: {"blocks", "of", "fraction"}
    gbps: float | None = None            # bytes per second
    flops_per_s: float | None = None
    peak_fraction: float | None = None
    peak_kind: str = ""                  # "copy" or "FP roof"
    ratio: float | None = None           # time / estimate
    extra: dict = field(default_factory=dict)

    @property
    def correct(self) -> bool:
        return (not self.failure and self.cases_total > 0 and self.cases_passed == self.cases_total
                and not self.bench_check.startswith("FAIL"))


def fill_numbers(row: Row, copy_bandwidth: float | None, roof: dict[str, float], flops_by_dtype: dict | None) -> None:
    """GB/s, FLOP/s, % of peak and meas/est from the row's time, bytes, FLOPs and estimate."""
    if not row.time_s or row.time_s <= 0:
        return
    row.gbps = row.bytes / row.time_s
    if row.flops is not None:
        row.flops_per_s = row.flops / row.time_s
    if row.estimate_s:
        row.ratio = row.time_s / row.estimate_s
    if row.bound == "compute" and flops_by_dtype and roof:
        limit = sum(n / roof.get(dt, roof.get("float32", math.inf)) for dt, n in flops_by_dtype.items())
        if limit > 0:
            row.peak_fraction, row.peak_kind = limit / row.time_s, "FP roof"
    elif copy_bandwidth:
        row.peak_fraction, row.peak_kind = row.gbps / copy_bandwidth, "copy"


# ----------------------------------------------------------------------------------------------- text

#: before an estimate made from a sample of the launch's blocks (``gpusim.sampling``; the notes say how many)
SAMPLED_MARK = "~"

COLUMNS = ("#", "puzzle", "back end", "correct", "size", "time", "GB/s", "% of peak", "GFLOP/s", "sim estimate",
           "meas/est")


def cells(row: Row) -> list[str]:
    if row.cases_total and not row.failure:
        correct = f"{row.cases_passed}/{row.cases_total}" + (" ok" if row.cases_passed == row.cases_total
                                                              else " FAIL")
    else:
        correct = "FAIL" if row.failure else "—"
    if row.bench_check.startswith("FAIL"):
        correct += ", bench FAIL"
    elif row.bench_check == "pass":
        correct += ", bench ok"
    bound = {"memory": " mem", "compute": " fp"}.get(row.bound, "") if row.estimate_s else ""
    sampled = SAMPLED_MARK if row.estimate_s and row.estimate_sample else ""
    return [
        str(row.number), row.slug, row.backend, correct, row.size or "—", fmt_time(row.time_s),
        "—" if row.gbps is None else sig(row.gbps / 1e9),
        "—" if row.peak_fraction is None else f"{sig(100 * row.peak_fraction)}% {row.peak_kind}",
        "—" if row.flops_per_s is None else sig(row.flops_per_s / 1e9),
        sampled + fmt_time(row.estimate_s) + bound,
        "—" if row.ratio is None else f"{row.ratio:.2f}",
    ]


def sig(x: float) -> str:
    """Three significant digits, thousands separated: 4,101 / 70.2 / 3.14 / 0.00512."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def text_table(rows: list[Row]) -> str:
    body = [list(COLUMNS)] + [cells(r) for r in rows]
    widths = [max(len(line[i]) for line in body) for i in range(len(COLUMNS))]
    right = {0, 5, 6, 7, 8, 9, 10}
    out = []
    for k, line in enumerate(body):
        out.append("  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths))))
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def markdown_table(rows: list[Row]) -> str:
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---:" if i in (0, 5, 6, 7, 8, 9, 10) else "---"
                                                           for i in range(len(COLUMNS))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells(r)) + " |")
    return "\n".join(out)


def problems(rows: list[Row]) -> list[str]:
    """One line per row that is not right, with what went wrong."""
    out = []
    for r in rows:
        if r.failure:
            out.append(f"{r.number} {r.slug} ({r.backend}): {r.failure}")
        elif r.cases_total and r.cases_passed < r.cases_total:
            out.append(f"{r.number} {r.slug} ({r.backend}): {r.cases_total - r.cases_passed} case(s) wrong")
        if r.bench_check.startswith("FAIL"):
            out.append(f"{r.number} {r.slug} ({r.backend}), benchmark case {r.bench}: {r.bench_check}")
    return out


def notes(rows: list[Row]) -> list[str]:
    """Rows timed at their largest valid case, and rows without an estimate or a check: a puzzle's note once
    whatever its back ends (the case and the estimate are the puzzle's), a missing check per back end."""
    out: dict[str, None] = {}
    for r in rows:
        if r.size == "max" and r.bench_note:
            out[f"{r.number} {r.slug}: {r.bench_note}"] = None
        if r.estimate_s and r.estimate_sample:
            s = r.estimate_sample
            out[f"{r.number} {r.slug}: {SAMPLED_MARK}estimate from a sample of {s['blocks']:,} of its {s['of']:,} "
                f"blocks ({sig(100 * s['fraction'])} %), scaled to the whole grid (docs/graduate.md, sampled "
                "estimates)"] = None
        if r.time_s and r.estimate_s is None and r.estimate_note:
            out[f"{r.number} {r.slug}: no simulator estimate ({r.estimate_note})"] = None
        if r.bench_check.startswith("not checked"):
            out[f"{r.number} {r.slug} ({r.backend}): benchmark outputs {r.bench_check}"] = None
    return list(out)


def row_dict(row: Row) -> dict:
    d = asdict(row)
    d["correct"] = row.correct
    return d


def fmt_time(s: float | None) -> str:
    if s is None or not math.isfinite(s):
        return "—"
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def fmt_bytes_per_s(b: float) -> str:
    return f"{b / 1e12:.2f} TB/s" if b >= 1e12 else f"{b / 1e9:.0f} GB/s"


def header(device: dict | None, peaks: dict | None, size: int) -> list[str]:
    if not device:
        return []
    lines = [f"graduate mode on {device.get('label', device.get('name'))}" +
             (f", numba-cuda {device['numba_cuda']}" if device.get("numba_cuda") else "")]
    if not peaks and device.get("name") == "Triton interpreter":
        return lines + ["the puzzles' own cases only, checked against the spec; nothing is timed"]
    if peaks:
        by = ", ".join(f"{fmt_bytes_per_s(v)} at {int(k) >> 20} MiB" for k, v in peaks["copy_by_size"].items())
        lines.append(f"copy bandwidth (device to device, measured in this run): {by}; peak "
                     f"{fmt_bytes_per_s(peaks['copy_bandwidth'])}")
        roof = peaks.get("roof") or {}
        if roof:
            lines.append("FLOP/s roof (SMs x results/clock x 2 x clock): " + ", ".join(
                f"{dt} {v / 1e12:.1f} T" for dt, v in sorted(roof.items())) +
                f"; measured float32 FMA chains {peaks.get('fma_float32', 0) / 1e12:.1f} T")
    lines.append(f"benchmark size: {size_label(size)} elements of work (--size {size}); "
                 "single-block puzzles at their largest valid launch")
    return lines
