"""Plain-text views of puzzles, check results and progress, for the command line.

Functions here return strings and print nothing; ``puzzles.cli`` decides where they go.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

from gpusim.faults import KernelTimeout

from .checker import MAX_STEPS, max_stars
from .model import Puzzle
from .progress import Progress, revealed_hints
from .results import CheckResult

MAX_PRINTED_LINES = 40   # of what a solution printed


def fault_summary(fault) -> str:
    """A fault's first sentence as a player should read it.

    The step budget is the checker's, not a knob the player can turn: an endless loop says so in those words.
    """
    if isinstance(fault, KernelTimeout):
        budget = getattr(fault, "max_steps", 0) or MAX_STEPS
        return (f"The kernel probably never ends: it did more than {budget:,} steps of work, the most a check lets "
                "one launch run. Look for a loop whose condition some thread never makes false.")
    return fault.summary


def failure_message(failure) -> str:
    """A failure's message, with a fault's first sentence as ``fault_summary`` words it."""
    fault = getattr(failure, "fault", None)
    if fault is None or not fault.summary:
        return failure.message
    return failure.message.replace(fault.summary, fault_summary(fault), 1)


def star_line(tier) -> str:
    """``★★  description (rules)``; the rules are left out when they only repeat the description."""
    rules = "; ".join(r.description for r in tier.rules)
    same = not rules or rules.strip().lower() in tier.description.strip().lower()
    return f"  {'★' * tier.stars}  {tier.description}" + ("" if same else f" ({rules})")


def kernel_output(result: CheckResult, limit: int = MAX_PRINTED_LINES) -> list[str]:
    """What the kernels printed with ``print()``, launch by launch (``LaunchReport.output``), as lines."""
    lines: list[str] = []
    for case in result.cases:
        for number, report in enumerate(case.reports, 1):
            records = list(getattr(report, "output", None) or [])
            dropped = int(getattr(report, "output_dropped", 0) or 0)
            if not records and not dropped:
                continue
            lines.append(f"  case {case.name!r}, launch {number}:")
            for r in records:
                lines.append(f"  | block {r.block} thread {r.thread} (line {r.lineno}): {r.text}")
            if dropped:
                lines.append(f"  | ... {dropped} more lines not kept (a launch keeps the first {len(records)})")
    if len(lines) > limit:
        lines = lines[:limit] + [f"  | ... ({len(lines) - limit} more lines)"]
    return lines


def stars(earned: int, most: int) -> str:
    """``★★☆`` for 2 stars out of 3."""
    return "★" * earned + "☆" * max(most - earned, 0)


def puzzle_list(puzzles: Sequence[Puzzle], progress: Progress) -> str:
    """One line per puzzle: number, slug, title, chapter, difficulty, stars earned."""
    if not puzzles:
        return "No puzzles are installed yet."
    slug_w = max(len(p.slug) for p in puzzles)
    title_w = min(max(len(p.title) for p in puzzles), 40)
    lines = [f"{'#':>3}  {'puzzle':<{slug_w}}  {'title':<{title_w}}  ch  level  stars"]
    seen_any = False
    earned = total = 0
    for p in puzzles:
        got, most = progress.stars(p.slug), max_stars(p)
        earned, total = earned + got, total + most
        title = p.title if len(p.title) <= title_w else p.title[: title_w - 1] + "…"
        level = "●" * p.difficulty + "○" * max(5 - p.difficulty, 0)
        entry = progress.puzzles.get(p.slug)
        seen = bool(entry and entry.solution_revealed)
        seen_any |= seen
        lines.append(f"{p.number:>3}  {p.slug:<{slug_w}}  {title:<{title_w}}  {p.chapter:>2}  {level}  "
                     f"{stars(got, most):<5}" + ("  (solution seen)" if seen else "").rstrip())
    lines = [line.rstrip() for line in lines]
    lines.append(f"\n{earned} of {total} stars earned."
                 + ("  (solution seen): you have read that puzzle's reference solution." if seen_any else ""))
    return "\n".join(lines)


def puzzle_page(puzzle: Puzzle, progress: Progress, file: Path) -> str:
    """Everything the player needs to start a puzzle: the task, the rules, the stars, where to write."""
    out = [f"Puzzle {puzzle.number}: {puzzle.title}  ({puzzle.slug}, chapter {puzzle.chapter}, "
           f"level {puzzle.difficulty} of 5)", "", puzzle.description.strip(), ""]
    out.append("Write: " + ", ".join(f"`{k}`" for k in puzzle.kernels))
    if puzzle.constraints:
        out.append("Constraints (all must hold):")
        out.extend(f"  - {rule.description}" for rule in puzzle.constraints)
    out.append("Stars:")
    out.append(f"  {stars(1, 1)}  a correct solution that meets every constraint")
    out.extend(star_line(tier) for tier in sorted(puzzle.stars, key=lambda s: s.stars))
    got = progress.stars(puzzle.slug)
    out.append(f"You have: {stars(got, max_stars(puzzle))}")
    seen = revealed_hints(puzzle, progress)
    if puzzle.hints:
        out.append(f"Hints: {len(seen)} of {len(puzzle.hints)} revealed (`gpu-puzzles hint {puzzle.slug}`)")
        out.extend(f"  {i}. {h}" for i, h in enumerate(seen, 1))
    if puzzle.reading and puzzle.reading not in puzzle.description:
        out.append(f"Read more: {puzzle.reading}")
    where = "" if file.exists() else f"  (created from the starter by `gpu-puzzles path {puzzle.slug}`)"
    out.append(f"Your file: {file}{where}")
    out.append(f"Check it:  gpu-puzzles check {puzzle.slug}")
    return "\n".join(out)


def check_report(result: CheckResult, title: str = "") -> str:
    """The verdict on one solution: each case, each failure with its details, the stars, the next star."""
    heading = f"Puzzle {result.number}: {title or result.puzzle}"
    out = [heading, f"  file: {result.file}"]
    if result.cases:
        out.append(f"  cases drawn with seed {result.seed} (`--seed {result.seed}` replays them)")
    case_failures = {id(f) for c in result.cases for f in c.failures}
    for failure in result.failures:
        if id(failure) not in case_failures:
            out.append(_block(failure_message(failure), 2, "✗"))
    shown: dict[tuple, str] = {}      # a fault seen in an earlier case is named, not repeated
    for case in result.cases:
        mark = {"pass": "✓", "fail": "✗"}.get(case.status, "·")
        line = f"  {mark} {case.name}" + ("" if case.status != "not run" else " (not run)")
        out.append(line)
        for failure in case.failures:
            key = _fault_key(failure)
            if key is not None and key in shown:
                out.append(f"      the same {type(failure.fault).__name__} as in case {shown[key]!r}")
                continue
            if key is not None:
                shown[key] = case.name
            out.append(_block(failure_message(failure), 6))
        if case.failures and case.note:
            out.append(f"      (this case: {case.note})")
    if result.stdout.strip():
        printed = result.stdout.rstrip("\n").splitlines()
        shown = printed[:MAX_PRINTED_LINES]
        out.append("Your file printed:")
        out.extend(f"  | {line}" for line in shown)
        if len(printed) > len(shown):
            out.append(f"  | ... ({len(printed) - len(shown)} more lines)")
    printed = kernel_output(result)
    if printed:
        out.append("Your kernels printed:")
        out.extend(printed)
    out.extend(f"Note: {note}" for note in result.notes)
    if result.passed:
        mark = stars(result.stars, result.max_stars)
        out.append(f"PASS {mark}  ({result.stars} of {result.max_stars} stars)")
    else:
        failed = sum(1 for c in result.cases if c.status == "fail")
        summary = f"{failed} of {len(result.cases)} test cases failed" if result.cases else "nothing ran"
        out.append(f"FAIL  ({summary})")
    if result.next_star and (result.passed or result.stars < result.max_stars):
        out.append(f"Next: {result.next_star}")
    return "\n".join(out)


def check_line(number: int, slug: str, status: str, result: CheckResult | None) -> str:
    """One line of ``check --all``."""
    if result is None:
        return f"  · {number:>3} {slug}: {status}"
    if result.passed:
        return f"  ✓ {number:>3} {slug} {stars(result.stars, result.max_stars)}"
    first = failure_message(result.failures[0]).splitlines()[0] if result.failures else "failed"
    return f"  ✗ {number:>3} {slug}: {textwrap.shorten(first, 100)}"


def _fault_key(failure) -> tuple | None:
    fault = failure.fault
    if fault is None:
        return None
    return (type(fault).__name__, fault.filename, fault.lineno, fault.array)


def _block(message: str, indent: int, mark: str = "") -> str:
    """A possibly multi-line message, indented; its own inner indentation is kept."""
    lines = message.splitlines() or [""]
    first = " " * indent + (f"{mark} " if mark else "") + lines[0]
    return "\n".join([first] + [" " * indent + line for line in lines[1:]])
