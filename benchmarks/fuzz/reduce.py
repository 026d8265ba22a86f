"""Shrink a finding to a minimal reproducer: drop lines (with the block under them), simplify the launch,
keep each change that still gives the same finding (its ``signature``)."""

from __future__ import annotations

from collections.abc import Callable

from .cases import Case
from .execute import Outcome

MAX_TRIALS = 400


def reduce_case(case: Case, outcome: Outcome, run: Callable[[list[Case]], list[Outcome]],
                max_trials: int = MAX_TRIALS, key: Callable[[Outcome], str] | None = None) -> tuple[Case, int]:
    """The smallest case found that reproduces ``outcome.signature``, and how many trials it took.

    ``run`` runs a batch of cases (under the watchdog) and returns their outcomes in order; ``key`` says
    what must stay the same (the signature, or "hang", unless given).
    """
    if case.raw is not None:                 # a file of odd bytes: its bytes are the point
        return case, 0
    _key = key or _signature
    target = _key(outcome)
    trials = 0

    def same(candidate: Case) -> bool:
        nonlocal trials
        trials += 1
        return _key(run([candidate])[0]) == target

    for field, simple in (("grid", 1), ("block", 1), ("shared_mem", 0)):
        if case.kind == "kernel" and getattr(case, field) != simple and trials < max_trials:
            candidate = case.with_(**{field: simple})
            if same(candidate):
                case = candidate
    changed = True
    while changed and trials < max_trials:
        changed = False
        lines = case.source.split("\n")
        k = len(lines) - 1
        while k >= 0 and trials < max_trials:
            if lines[k].strip() and not (k > 0 and lines[k - 1].startswith("@")):
                end = _block_end(lines, _decorated(lines, k))   # a decorator goes with its function
                candidate = case.with_(source="\n".join(lines[:k] + lines[end:]))
                if same(candidate):
                    case, lines, changed = candidate, candidate.source.split("\n"), True
            k -= 1
    return case, trials


def _signature(outcome: Outcome) -> str:
    if outcome.label == "hang":
        return "hang"
    return outcome.signature


def _decorated(lines: list[str], k: int) -> int:
    """The line of the function that the decorators from line ``k`` on decorate (``k`` if none)."""
    while k < len(lines) - 1 and lines[k].startswith("@"):
        k += 1
    return k


def _block_end(lines: list[str], k: int) -> int:
    """The index after line ``k`` and every following line indented deeper (its block)."""
    indent = len(lines[k]) - len(lines[k].lstrip())
    end = k + 1
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    return end
