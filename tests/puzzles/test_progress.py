"""Tests for puzzles/progress.py: atomic saves, corrupt and missing files, recording checks and reveals."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest

from puzzles import progress as progress_mod
from puzzles.progress import (
    PuzzleProgress,
    load_progress,
    progress_path,
    record_check,
    reveal_hint,
    reveal_solution,
    revealed_hints,
    save_progress,
)


def test_missing_file_is_empty_progress(home):
    p = load_progress()
    assert p.puzzles == {} and p.warnings == [] and p.path == home / "progress.json"


def test_round_trip(home):
    p = load_progress()
    p.entry("map").attempts = 2
    p.entry("map").solved_at = "2025-01-01T00:00:00+00:00"
    assert save_progress(p)
    again = load_progress()
    assert again.puzzles["map"] == PuzzleProgress(attempts=2, solved_at="2025-01-01T00:00:00+00:00")
    doc = json.loads(progress_path().read_text())
    assert doc["schema"] == 1 and doc["puzzles"]["map"]["attempts"] == 2


def test_a_failed_write_leaves_the_old_file_whole(home, monkeypatch):
    p = load_progress()
    p.entry("map").best_stars = 1
    save_progress(p)
    before = progress_path().read_bytes()

    def explode(*args, **kwargs):
        raise OSError(28, "No space left on device")

    import puzzles.files

    monkeypatch.setattr(puzzles.files.os, "fsync", explode)  # the disk fills up half-way through the write
    p.entry("map").best_stars = 3
    assert not save_progress(p)
    assert "No space left on device" in p.warnings[-1]
    assert progress_path().read_bytes() == before
    assert sorted(os.listdir(home)) == ["progress.json"]   # no temporary file left behind


@pytest.mark.parametrize("garbage", ['{"puzzles": {"map": {"attempts": 1}', "[1, 2]", '{"puzzles": 3}',
                                     "\x00\xff"])
def test_a_corrupt_file_is_moved_aside_and_play_continues(home, garbage):
    home.mkdir()
    progress_path().write_text(garbage, encoding="latin-1")
    p = load_progress()
    assert p.puzzles == {} and "corrupt" in p.warnings[0]
    aside = [f for f in os.listdir(home) if f.startswith("progress.json.corrupt-")]
    assert len(aside) == 1 and (home / aside[0]).read_text(encoding="latin-1") == garbage
    assert not progress_path().exists()
    p.entry("map").attempts = 1
    assert save_progress(p) and load_progress().puzzles["map"].attempts == 1


def test_two_corrupt_files_in_one_second_are_both_kept(home):
    home.mkdir()
    for text in ("{bad", "{worse"):
        progress_path().write_text(text)
        load_progress()
    kept = sorted((home / f).read_text() for f in os.listdir(home) if ".corrupt-" in f)
    assert kept == ["{bad", "{worse"]


def test_a_corrupt_file_that_cannot_be_moved_is_never_overwritten(home, monkeypatch):
    home.mkdir()
    progress_path().write_text("{bad")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    with monkeypatch.context() as patch:
        patch.setattr(progress_mod.os, "replace", refuse)
        p = load_progress()
    assert "could not be moved aside" in p.warnings[0] and not p.writable
    p.entry("map").attempts = 1
    assert not save_progress(p)
    assert progress_path().read_text() == "{bad"


def test_fields_with_wrong_types_fall_back_to_defaults(home):
    home.mkdir()
    progress_path().write_text(json.dumps({"puzzles": {
        "map": {"attempts": "many", "best_stars": 2, "hints_revealed": -1, "solution_revealed": 1,
                "solved_at": 5, "unknown": True},
        "zip": "not an entry"}}))
    p = load_progress()
    assert p.warnings == []
    assert p.puzzles == {"map": PuzzleProgress(best_stars=2)}


def test_an_unwritable_folder_is_a_warning(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("GPU_PUZZLES_HOME", str(blocker / "home"))
    p = load_progress()
    assert not save_progress(p) and "cannot save progress" in p.warnings[0]


def test_record_check_counts_attempts_and_keeps_the_best(tiny):
    record_check(tiny, SimpleNamespace(passed=False, stars=0))
    record_check(tiny, SimpleNamespace(passed=True, stars=2))
    first_solved = load_progress().puzzles[tiny.slug].solved_at
    record_check(tiny, SimpleNamespace(passed=True, stars=1))
    entry = load_progress().puzzles[tiny.slug]
    assert entry.attempts == 3 and entry.best_stars == 2
    assert entry.solved_at == first_solved is not None and entry.last_checked_at is not None


def test_hints_are_revealed_one_at_a_time(tiny):
    assert reveal_hint(tiny) == (1, tiny.hints[0])
    assert reveal_hint(tiny) == (2, tiny.hints[1])
    assert reveal_hint(tiny) is None
    p = load_progress()
    assert p.puzzles[tiny.slug].hints_revealed == 2 and revealed_hints(tiny, p) == list(tiny.hints)


def test_reveal_solution_returns_the_reference_and_records_it(tiny):
    text = reveal_solution(tiny)
    assert "def add_one" in text
    assert load_progress().puzzles[tiny.slug].solution_revealed
