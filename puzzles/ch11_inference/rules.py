"""Checked rules that only chapter 11 needs (the general ones live in puzzles/rules.py)."""

from __future__ import annotations

from puzzles.model import Rule, RunStats
from puzzles.rules import SHARED_LD


def max_shared_loads_per_row(limit: int, rows: int, why: str) -> Rule:
    """At most ``limit`` warp-level shared-memory loads for each of the case's ``rows`` rows (one block per
    row): a bound on the work, which a block-level selection meets and one thread scanning the row does not.
    Every case of a puzzle using this rule has exactly ``rows`` rows."""

    def check(s: RunStats) -> str | None:
        if SHARED_LD not in s.metrics:
            return "the simulator reported no shared-memory instruction counts, so the work cannot be judged"
        per_row = s.metrics[SHARED_LD] / rows
        if per_row > limit:
            return (f"the kernel executes {per_row:,.0f} warp-level shared-memory loads per row; the budget is "
                    f"{limit:,} ({why})")
        return None

    return Rule(f"at most {limit:,} warp-level shared-memory loads per row", check)
