"""Correct solutions worded otherwise than the references (tests/puzzles/right/) pass, under several seeds.

A strict judge must not fail a right answer either. Each file is ``<slug_underscored>__<what>.py`` and starts
with ``# RIGHT: <slug>``: a kernel that computes what the puzzle asks with other float32 roundings than the
reference — torch's order of the AdamW step, another summation order, a reciprocal instead of a division —
where the puzzle's output is integers derived from floats (bf16 bits, int8 values, sampled tokens). Such
outputs are bit-exact only because the cases keep every exact value clear of its rounding boundary
(tests/puzzles/test_decision_margins.py checks the margins themselves).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from puzzle_fixtures import real_puzzles

from puzzles.checker import check_file

RIGHT_DIR = Path(__file__).resolve().parent / "right"
HEADER = re.compile(r"^# RIGHT: (?P<slug>[a-z0-9-]+)$")
PUZZLES = {p.slug: p for p in real_puzzles()}
FILES = sorted(RIGHT_DIR.glob("*.py"))
SEEDS = (20261201, 7, 11, 2026)


def _slug(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0].strip()
    match = HEADER.match(first)
    assert match, f"{path.name}: the first line must be `# RIGHT: <slug>`"
    slug = match["slug"]
    assert slug in PUZZLES, f"{path.name}: no puzzle {slug!r}"
    assert path.name.startswith(slug.replace("-", "_") + "__"), f"{path.name}: name must start with the slug"
    return slug


def test_every_right_solution_names_its_puzzle():
    assert len(FILES) >= 7
    for path in FILES:
        _slug(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_right_solution_passes_under_several_seeds(path: Path):
    puzzle = PUZZLES[_slug(path)]
    for seed in SEEDS:
        result = check_file(puzzle, path, seed=seed)
        assert result.passed and result.stars >= 1, (f"{path.name} failed with seed {seed}:\n"
                                                     + "\n".join(f.message for f in result.failures))
