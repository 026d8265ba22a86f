"""What a puzzle-sized launch would cost at the puzzle's benchmark size, from the numbers gpusim counted.

A puzzle launch moves a few kilobytes; at that size every kernel is launch-bound. ``at_scale`` scales the
launch's DRAM bytes and FLOPs (per dtype) to the size graduate mode times the puzzle at, and asks
``gpusim.roofline.estimate`` for the time there:

* a puzzle with ``bench(n)`` (about ``n`` elements of work per launch, ``docs/CONTRACTS.md``) is taken to
  ``REALISTIC_N`` = 2^24 elements: the factor is 2^24 over the element count of the launch's largest global
  array;
* a puzzle whose launch cannot grow (only ``bench_max()``: one block by design, a fixed grid...) is taken to
  its largest valid launch, ``bench_max()``'s largest array, with the puzzle's ``bench_note`` saying why.

The scaling assumes the same work per element: exact for element-wise kernels, reductions and scans; a
matrix product's FLOPs grow faster than its data, so there it is a lower bound. Nothing is run at the large
size (graduate mode does that, on the GPU and in gpusim, in minutes rather than at a key press), and
``bench(n)`` itself is not built (2^24 elements take seconds and hundreds of MB); ``bench_max()`` is, it is
small.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

REALISTIC_N = 1 << 24
READ, WRITE = "dram__bytes_read.sum", "dram__bytes_write.sum"


@dataclass(frozen=True)
class AtScale:
    n: int                 # elements of the launch's largest global array
    array: str             # its name
    target: int            # elements at the size scaled to
    label: str             # "n = 2^24", or "its largest valid launch (n = 1,024)"
    factor: float          # target / n
    estimate: Any          # gpusim.roofline.Estimate of the scaled counts
    why: str = ""          # why the launch cannot grow further (the puzzle's bench_note), if it cannot


@dataclass
class _Counts:
    """What ``gpusim.roofline.estimate`` reads of a report: metrics and flops."""

    metrics: dict = field(default_factory=dict)
    flops: dict = field(default_factory=dict)


def largest_global(report: Any) -> Any:
    """The ``ArrayInfo`` of the launch's largest global array (None if it has none)."""
    arrays = [a for a in getattr(report, "arrays", []) or [] if a.space == "global"]
    return max(arrays, key=lambda a: a.size, default=None)


def target_size(puzzle: Any) -> tuple[int, str, str] | None:
    """(elements, label, why) of the size the puzzle is timed at in graduate mode; None if it declares none."""
    if getattr(puzzle, "bench", None) is not None:
        return REALISTIC_N, "n = 2^24", ""
    bench_max = getattr(puzzle, "bench_max", None)
    if bench_max is None:
        return None
    try:
        case = bench_max()
    except Exception:
        return None
    sizes = [v.size for v in case.buffers.values() if isinstance(v, np.ndarray)]
    if not sizes:
        return None
    n = max(sizes)
    return n, f"its largest valid launch (n = {n:,})", str(getattr(puzzle, "bench_note", "") or "")


def at_scale(report: Any, gpu: str, puzzle: Any = None, target: tuple[int, str, str] | None = None) -> AtScale | None:
    """The estimate for ``report``'s kernel at ``puzzle``'s benchmark size (``target``, when given, instead:
    (elements, label, why)); None when the launch is that large already, has nothing to scale, or the puzzle
    declares no benchmark size."""
    from gpusim.roofline import estimate

    if target is None:
        target = target_size(puzzle) if puzzle is not None else (REALISTIC_N, "n = 2^24", "")
    if target is None:
        return None
    size, label, why = target
    largest = largest_global(report)
    metrics = getattr(report, "metrics", None) or {}
    if largest is None or largest.size == 0 or largest.size >= size or READ not in metrics:
        return None
    factor = size / largest.size
    counts = _Counts(
        metrics={READ: metrics[READ] * factor, WRITE: metrics.get(WRITE, 0) * factor},
        flops={dt: {op: round(n * factor) for op, n in ops.items()} for dt, ops in (report.flops or {}).items()})
    return AtScale(largest.size, largest.name, size, label, factor, estimate(counts, gpu), why)
