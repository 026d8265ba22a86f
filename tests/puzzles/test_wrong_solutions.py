"""Plausible wrong solutions (tests/puzzles/wrong/) are rejected, each for the reason its header states.

Each file is ``<slug_underscored>__<what>.py`` and starts with ``# WRONG: <slug> expect=<kind>[:<detail>]``:
kind ``mismatch``, a fault class (``OutOfBounds``, ``DataRace``, ``BarrierDivergence``, ``UninitializedRead``,
``KernelTimeout``), ``constraint`` or ``compile`` (detail: part of the failure's message; for ``compile`` it is
required: a file refused as a whole must be refused for the stated reason). Files named ``*__cheat_*`` try to
fool the judge at import time (patch the checker, swap a spec, silence the race tracker, import the
reference, print a fake verdict, bake answers); each must fail like any wrong solution.

Every file is checked with a fixed seed (the suite is deterministic), and again with a second seed: a wrong
solution must not pass by luck of the draw.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from puzzle_fixtures import puzzle_id, real_puzzles

from puzzles.checker import check_file

WRONG_DIR = Path(__file__).resolve().parent / "wrong"
HEADER = re.compile(r"^# WRONG: (?P<slug>[a-z0-9-]+) expect=(?P<kind>\w+)(?::(?P<detail>.+))?$")
FAULTS = {"OutOfBounds", "DataRace", "BarrierDivergence", "UninitializedRead", "KernelTimeout"}
PUZZLES = {p.slug: p for p in real_puzzles()}
FILES = sorted(WRONG_DIR.glob("*.py"))
SEEDS = (20261201, 7)


def _header(path: Path) -> re.Match:
    first = path.read_text(encoding="utf-8").splitlines()[0] if path.stat().st_size else ""
    match = HEADER.match(first.strip())
    assert match, f"{path.name}: the first line must be `# WRONG: <slug> expect=<kind>[:<detail>]`"
    return match


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_wrong_solution_is_rejected_for_its_reason(path: Path):
    header = _header(path)
    slug, kind, detail = header["slug"], header["kind"], (header["detail"] or "").strip()
    assert slug in PUZZLES, f"{path.name}: no puzzle {slug!r}"
    assert path.name.startswith(slug.replace("-", "_") + "__"), f"{path.name}: name must start with the slug"
    assert kind in FAULTS | {"mismatch", "constraint", "compile"}, f"{path.name}: unknown kind {kind!r}"
    assert kind != "compile" or detail, f"{path.name}: expect=compile needs a detail"
    for seed in SEEDS:
        _rejected(PUZZLES[slug], path, kind, detail, seed)


def _rejected(puzzle, path: Path, kind: str, detail: str, seed: int) -> None:
    result = check_file(puzzle, path, seed=seed)
    seen = [f"[{f.kind}{':' + type(f.fault).__name__ if f.fault is not None else ''}] {f.message}"
            for f in result.failures]
    assert not result.passed and result.stars == 0, f"{path.name} passed with seed {seed}; it should fail with {kind}"
    unexpected = ("error",) if kind == "compile" else ("error", "compile")
    assert not any(f.kind in unexpected for f in result.failures), "\n".join(seen)
    if kind in FAULTS:
        ok = any(f.kind == "fault" and kind in f.detail.get("faults", [type(f.fault).__name__])
                 for f in result.failures)
    else:
        ok = any(f.kind == kind and detail in f.message for f in result.failures)
    assert ok, f"expected {kind}{':' + detail if detail else ''}, got:\n" + "\n".join(seen)


@pytest.mark.parametrize("puzzle", list(PUZZLES.values()), ids=puzzle_id)
def test_every_puzzle_has_two_wrong_solutions_of_its_own(puzzle):
    """At least two plausible wrong solutions per puzzle (issue 12 asks it of every new puzzle, as the first
    47 have); the import-time cheats, which try to fool the judge rather than solve the puzzle wrongly, do
    not count."""
    prefix = puzzle.slug.replace("-", "_") + "__"
    own = [p.name for p in FILES if p.name.startswith(prefix) and "__cheat_" not in p.name]
    assert len(own) >= 2, f"{puzzle.slug} has {own}: add tests/puzzles/wrong/{prefix}<what>.py"

