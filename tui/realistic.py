"""What a puzzle-sized launch would cost at a realistic size, from the numbers gpusim counted.

A puzzle launch moves a few kilobytes; at that size every kernel is "launch-bound". ``at_realistic_size``
scales the launch's DRAM bytes and FLOPs (per dtype) by ``REALISTIC_N / n``, where ``n`` is the element count
of the launch's largest global array, and asks ``gpusim.roofline.estimate`` for the time. The scaling assumes
the same work per element: exact for element-wise kernels, reductions and scans; a matrix product's FLOPs grow
faster than its data, so there it is a lower bound. Nothing is run at the large size.

``float64_note`` says when a kernel's arithmetic ran in float64 though none of its arrays is float64 (a
Python number in float32 arithmetic promotes it, as numba does on the GPU).
"""

from __future__ import annotations

from dataclasses import dataclass, field

REALISTIC_N = 1 << 24
READ, WRITE = "dram__bytes_read.sum", "dram__bytes_write.sum"


@dataclass(frozen=True)
class Scaled:
    n: int                 # elements of the launch's largest global array
    array: str             # its name
    factor: float          # REALISTIC_N / n
    estimate: object       # gpusim.roofline.Estimate of the scaled counts


@dataclass
class _Counts:
    """What ``gpusim.roofline.estimate`` reads of a report: metrics and flops."""

    metrics: dict = field(default_factory=dict)
    flops: dict = field(default_factory=dict)


def largest_global(report):
    arrays = [a for a in getattr(report, "arrays", []) or [] if a.space == "global"]
    return max(arrays, key=lambda a: a.size, default=None)


def at_realistic_size(report, gpu: str, target: int = REALISTIC_N) -> Scaled | None:
    """The estimate for ``report``'s kernel at ``target`` elements; None when it is that large already or
    has nothing to scale."""
    from gpusim.roofline import estimate

    largest = largest_global(report)
    metrics = getattr(report, "metrics", None) or {}
    if largest is None or largest.size == 0 or largest.size >= target or READ not in metrics:
        return None
    factor = target / largest.size
    counts = _Counts(
        metrics={READ: metrics[READ] * factor, WRITE: metrics.get(WRITE, 0) * factor},
        flops={dt: {op: round(n * factor) for op, n in ops.items()} for dt, ops in (report.flops or {}).items()})
    return Scaled(largest.size, largest.name, factor, estimate(counts, gpu))


def float64_note(report) -> tuple[int, int] | None:
    """(float64 FLOPs, all FLOPs) when float64 arithmetic ran but no global array is float64; else None."""
    from gpusim.observe.flops import flop_total

    per_dtype = flop_total(getattr(report, "flops", None) or {})
    f64 = per_dtype.get("float64", 0)
    if not f64:
        return None
    arrays = [a for a in getattr(report, "arrays", []) or [] if a.space in ("global", "shared")]
    if any(str(a.dtype) == "float64" for a in arrays):
        return None
    return f64, sum(per_dtype.values())
