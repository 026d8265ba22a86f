"""Every untouched starter fails cleanly: exit status 1, a message for the player, no traceback, no bug."""

from __future__ import annotations

import json

import pytest
from puzzle_fixtures import puzzle_id, real_puzzles

from puzzles import workspace
from puzzles.cli import main


@pytest.mark.parametrize("puzzle", real_puzzles(), ids=puzzle_id)
def test_untouched_starter_fails_cleanly(puzzle, capsys):
    starter = workspace.starter_path(puzzle)
    assert starter.is_file(), f"puzzle {puzzle.number} has no starter at {starter}"
    code = main(["check", puzzle.slug, "--file", str(starter), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code == 1, out + err
    doc = json.loads(out)
    assert not doc["passed"] and doc["failures"]
    for failure in doc["failures"]:
        assert failure["message"].strip()
        # "error" means the simulator or the puzzle broke, not the player's (unfinished) kernel
        assert failure["kind"] != "error", failure["message"]
