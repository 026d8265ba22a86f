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


def float32_arithmetic_only() -> Rule:
    """No float64 floating-point operations (gpusim counts FLOPs per dtype)."""

    def check(s: RunStats) -> str | None:
        if "gpusim__flops_total" not in s.metrics:
            return "the simulator reported no FLOP counts, so the arithmetic's precision cannot be judged"
        n = int(s.metrics.get("gpusim__flops_float64", 0))
        if n:
            return (f"the kernel runs {n} float64 operations: a Python literal such as 0.9 or 1.0 is float64, "
                    f"and float32 * float64 is float64 — wrap constants in numba.float32(...)")
        return None

    return Rule("float32 arithmetic only", check)
