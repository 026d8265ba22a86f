"""Rules only chapter 9 needs, built from ``RunStats`` like those in ``puzzles.rules``."""

from __future__ import annotations

from puzzles.model import Rule, RunStats


def max_atomics(limit: int, why: str) -> Rule:
    """At most ``limit`` atomic operations (lane-level, all launches of a case together)."""

    def check(s: RunStats) -> str | None:
        if s.atomics > limit:
            return f"the solution runs {s.atomics} atomic operations; {why}"
        return None

    return Rule(f"at most {limit} atomic operations", check)
