"""The launches of a check, flattened: each (case, launch) pair the visualisers can show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LaunchRef:
    case_number: int       # 1-based
    case_count: int
    case_name: str
    case_status: str       # "pass", "fail", "not run"
    launch_number: int     # 1-based within the case
    launch_count: int
    report: Any            # gpusim LaunchReport

    @property
    def title(self) -> str:
        launch = self.report.launch
        mark = {"pass": "✓", "fail": "✗"}.get(self.case_status, "·")
        grid = "×".join(str(d) for d in _trim(launch.grid))
        block = "×".join(str(d) for d in _trim(launch.block))
        which = f" · launch {self.launch_number}/{self.launch_count}" if self.launch_count > 1 else ""
        extra = getattr(self.report, "extra", None) or {}
        device = extra.get("device")
        where = f" on device {device}" if device is not None else ""
        moved = getattr(extra.get("links"), "bytes", None) or {}
        links = "".join(f" · {n:,} B over {src}→{dst}" for (src, dst), n in sorted(moved.items()) if n)
        return (f"case {self.case_number}/{self.case_count} {mark} {self.case_name}{which}{where} · "
                f"{launch.kernel}, grid {grid}, block {block}{links}")


def _trim(dims: tuple[int, ...]) -> tuple[int, ...]:
    dims = tuple(dims)
    while len(dims) > 1 and dims[-1] == 1:
        dims = dims[:-1]
    return dims


def launches_of(result: Any) -> list[LaunchRef]:
    """Every launch that ran, case by case, in order."""
    refs: list[LaunchRef] = []
    cases = list(getattr(result, "cases", []) or [])
    for i, case in enumerate(cases, 1):
        reports = list(getattr(case, "reports", []) or [])
        for j, report in enumerate(reports, 1):
            refs.append(LaunchRef(i, len(cases), case.name, case.status, j, len(reports), report))
    return refs


def default_launch(refs: list[LaunchRef], next_star: str | None = None) -> int:
    """Where the visualisers start: the first launch of a failing case (a fault first); else the case the next
    star's message names (the judge names the first case where its rule does not hold); else the first."""
    for i, ref in enumerate(refs):
        if getattr(ref.report, "faults", None):
            return i
    for i, ref in enumerate(refs):
        if ref.case_status == "fail":
            return i
    for i, ref in enumerate(refs):
        if next_star and f"(case {ref.case_name!r})" in next_star:
            return i
    return 0
