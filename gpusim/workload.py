"""``Workload``: what the timing model reads of one launch — its geometry and gpusim's counts — as plain data.

A ``LaunchReport`` holds much more (per-thread counts, the trace, the arrays); the model needs only this, and
this is small enough to keep in a cache file and re-estimate later with other machine parameters
(``benchmarks/gpu/estimate_fit.py`` does that). ``Workload.of(report)`` takes it from a report;
``to_dict`` / ``from_dict`` round-trip it through JSON.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .device import WARP_SIZE


@dataclass(frozen=True)
class Workload:
    """One launch as the timing model sees it (see ``gpusim.timing_model``)."""

    grid: tuple[int, int, int] = (1, 1, 1)
    block: tuple[int, int, int] = (1, 1, 1)
    shared_bytes_per_block: int = 0
    metrics: dict[str, float] = field(default_factory=dict)      # report.metrics (ncu names and gpusim__*)
    flops: dict[str, dict[str, int]] = field(default_factory=dict)  # {dtype: {op: lane count}}
    geometry: bool = True         # False: only metrics and FLOPs are known (no launch, no latency rounds)

    @property
    def num_blocks(self) -> int:
        return math.prod(self.grid)

    @property
    def threads_per_block(self) -> int:
        return math.prod(self.block)

    @property
    def warps_per_block(self) -> int:
        return (self.threads_per_block + WARP_SIZE - 1) // WARP_SIZE

    def m(self, key: str) -> float:
        return float(self.metrics.get(key, 0) or 0)

    @classmethod
    def of(cls, report) -> Workload:
        """From a ``LaunchReport`` (or anything with ``metrics`` and ``flops``; ``launch`` if it has one)."""
        metrics = {k: v for k, v in (getattr(report, "metrics", None) or {}).items() if isinstance(v, (int, float))}
        flops = {dt: dict(ops) for dt, ops in (getattr(report, "flops", None) or {}).items()}
        launch = getattr(report, "launch", None)
        if launch is None:
            return cls(metrics=metrics, flops=flops, geometry=False)
        return cls(tuple(launch.grid), tuple(launch.block), int(getattr(report, "shared_bytes_per_block", 0) or 0),
                   metrics, flops, geometry=True)

    def scaled(self, factor: float) -> Workload:
        """The same launch with ``factor`` times the blocks along x and every summed count (``*.sum``,
        ``*_sum``) and FLOP count times ``factor``; per-block and per-address maxima (``*_max``,
        ``gpusim__atomic_max_per_address``) stay. Exact for a kernel whose blocks each do the same work
        whatever the size (a map, a tile per block); an estimate of a larger launch than gpusim can run."""
        grid = (max(1, round(self.grid[0] * factor)), self.grid[1], self.grid[2])
        metrics = {k: (v * factor if k.endswith((".sum", "_sum")) else v) for k, v in self.metrics.items()}
        flops = {dt: {op: round(n * factor) for op, n in ops.items()} for dt, ops in self.flops.items()}
        return Workload(grid, self.block, self.shared_bytes_per_block, metrics, flops, self.geometry)

    def to_dict(self) -> dict:
        return {"grid": list(self.grid), "block": list(self.block),
                "shared_bytes_per_block": self.shared_bytes_per_block, "metrics": dict(self.metrics),
                "flops": {dt: dict(ops) for dt, ops in self.flops.items()}, "geometry": self.geometry}

    @classmethod
    def from_dict(cls, d: dict) -> Workload:
        def dims(v):
            v = [int(x) for x in (v if isinstance(v, (list, tuple)) else [v])]
            return tuple(v + [1] * (3 - len(v)))
        return cls(dims(d.get("grid", 1)), dims(d.get("block", 1)), int(d.get("shared_bytes_per_block", 0)),
                   dict(d.get("metrics", {})), {dt: dict(ops) for dt, ops in d.get("flops", {}).items()},
                   bool(d.get("geometry", True)))
