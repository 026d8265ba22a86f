"""Every reference solution passes every test case and constraint and earns every star of its puzzle."""

from __future__ import annotations

import pytest
from puzzle_fixtures import puzzle_id, real_puzzles

from puzzles import workspace
from puzzles.checker import check_file


@pytest.mark.parametrize("puzzle", real_puzzles(), ids=puzzle_id)
def test_reference_solution_earns_every_star(puzzle):
    path = workspace.reference_path(puzzle)
    assert path.is_file(), f"puzzle {puzzle.number} has no reference solution at {path}"
    result = check_file(puzzle, path)
    problems = [f"[{f.kind}] {f.case}: {f.message}" for f in result.failures]
    assert result.passed, "\n".join(problems)
    assert all(case.status == "pass" for case in result.cases)
    assert result.stars == result.max_stars, f"{result.stars} of {result.max_stars} stars; next: " \
        f"{result.next_star}; notes: {result.notes}"
    assert result.next_star is None
