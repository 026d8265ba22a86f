"""Tests for puzzles/progress.py: atomic saves under a lock; corrupt, odd, read-only and missing files; a FIFO
and deep nesting; recording checks and reveals. Many processes and kill -9: test_progress_stress.py."""

from __future__ import annotations

import json
import os
import stat
import threading
from dataclasses import asdict
from types import SimpleNamespace

import pytest

import puzzles.files
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
    assert sorted(os.listdir(home)) == [".progress.json.lock", "progress.json"]   # no temporary file left


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
        patch.setattr(puzzles.files.os, "replace", refuse)
        p = load_progress()
    assert "could not be moved aside" in p.warnings[0] and not p.writable
    p.entry("map").attempts = 1
    assert not save_progress(p)
    assert progress_path().read_text() == "{bad"


def test_fields_with_wrong_types_are_backed_up_and_dropped_with_a_message(home):
    home.mkdir()
    original = json.dumps({"puzzles": {
        "map": {"attempts": "many", "best_stars": 2, "hints_revealed": -1, "solution_revealed": 1,
                "solved_at": 5, "unknown": True},
        "zip": "not an entry"}})
    progress_path().write_text(original)
    p = load_progress()
    assert p.puzzles == {"map": PuzzleProgress(best_stars=2)}
    [warning] = p.warnings
    assert "'map' attempts='many'" in warning and "and 3 more" in warning       # six problems, three shown
    backups = [f for f in os.listdir(home) if f.startswith("progress.json.bak-")]
    assert len(backups) == 1 and backups[0] in warning
    assert (home / backups[0]).read_text() == original                          # kept whole
    saved = json.loads(progress_path().read_text())                             # saved again, understood parts
    assert saved == {"schema": 1, "puzzles": {"map": asdict(PuzzleProgress(best_stars=2))}}
    again = load_progress()
    assert again.warnings == [] and again.puzzles == p.puzzles                  # said once, kept once
    assert [f for f in os.listdir(home) if ".bak-" in f] == backups


def test_a_newer_schema_is_kept_whole_and_read_as_far_as_understood(home):
    home.mkdir()
    original = json.dumps({"schema": 2, "streak": 4, "puzzles": {
        "map": {"attempts": 3, "best_stars": 1, "badges": ["fast"]}}})
    progress_path().write_text(original)
    p = load_progress()
    assert p.puzzles == {"map": PuzzleProgress(attempts=3, best_stars=1)}
    [warning] = p.warnings
    assert "newer gpu-puzzles" in warning and "schema 2" in warning
    [copy] = [f for f in os.listdir(home) if f.startswith("progress.json.schema2-")]
    assert (home / copy).read_text() == original and copy in warning
    assert json.loads(progress_path().read_text())["schema"] == 1
    assert load_progress().warnings == []


@pytest.mark.parametrize("schema", ["1", 0, -3, 1.5, None])
def test_a_schema_that_is_not_a_version_is_a_problem(home, schema):
    home.mkdir()
    progress_path().write_text(json.dumps({"schema": schema, "puzzles": {"map": {"attempts": 2}}}))
    p = load_progress()
    assert p.puzzles["map"].attempts == 2 and "schema" in p.warnings[0]
    assert any(f.startswith("progress.json.bak-") for f in os.listdir(home))


def test_deep_nesting_is_moved_aside_not_a_crash(home):
    home.mkdir()
    progress_path().write_text("[" * 200_000 + "]" * 200_000)
    p = load_progress()
    assert p.puzzles == {} and "nested too deeply" in p.warnings[0]
    assert any(f.startswith("progress.json.corrupt-") for f in os.listdir(home))


def test_a_huge_file_is_moved_aside_unread(home, monkeypatch):
    home.mkdir()
    monkeypatch.setattr(progress_mod, "MAX_BYTES", 1000)
    progress_path().write_text(json.dumps({"puzzles": {f"p{k}": {} for k in range(200)}}))
    p = load_progress()
    assert p.puzzles == {} and "bytes, far more than progress takes" in p.warnings[0]


def _load_within(seconds: float) -> progress_mod.Progress:
    """load_progress in a thread, failing (not hanging) if it takes longer than ``seconds``."""
    box = []
    worker = threading.Thread(target=lambda: box.append(load_progress()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "load_progress hung"
    return box[0]


def test_a_fifo_at_the_path_never_hangs_and_is_moved_aside(home, tiny):
    home.mkdir()
    os.mkfifo(progress_path())
    p = _load_within(10)
    assert p.puzzles == {} and "FIFO" in p.warnings[0]
    [aside] = [f for f in os.listdir(home) if f.startswith("progress.json.corrupt-")]
    assert stat.S_ISFIFO(os.lstat(home / aside).st_mode)                        # kept as it was
    record_check(tiny, SimpleNamespace(passed=True, stars=1))
    assert load_progress().puzzles[tiny.slug].attempts == 1


def test_a_folder_at_the_path_is_moved_aside(home):
    (home / "progress.json").mkdir(parents=True)
    (home / "progress.json" / "note").write_text("mine")
    p = _load_within(10)
    assert "a folder" in p.warnings[0]
    [aside] = [f for f in os.listdir(home) if f.startswith("progress.json.corrupt-")]
    assert (home / aside / "note").read_text() == "mine"


def test_a_byte_order_mark_is_read(home):
    home.mkdir()
    progress_path().write_bytes(b"\xef\xbb\xbf" + json.dumps({"puzzles": {"map": {"attempts": 4}}}).encode())
    p = load_progress()
    assert p.warnings == [] and p.puzzles["map"].attempts == 4


def test_a_read_only_file_is_honoured_with_one_message(home, tiny):
    home.mkdir()
    progress_path().write_text(json.dumps({"schema": 1, "puzzles": {tiny.slug: {"attempts": 5}}}))
    os.chmod(progress_path(), 0o444)
    before = progress_path().read_bytes()
    p = load_progress()
    assert p.puzzles[tiny.slug].attempts == 5 and "read-only" in p.warnings[0]
    p.warnings.clear()
    record_check(tiny, SimpleNamespace(passed=True, stars=2), p)
    record_check(tiny, SimpleNamespace(passed=True, stars=2), p)
    assert p.warnings == []                                                     # said once per Progress
    assert p.puzzles[tiny.slug].attempts == 6                                   # counted in memory
    assert progress_path().read_bytes() == before and not save_progress(p)
    assert stat.S_IMODE(os.stat(progress_path()).st_mode) == 0o444
    os.chmod(progress_path(), 0o644)                                            # the player allows it again
    record_check(tiny, SimpleNamespace(passed=True, stars=2), p)
    assert load_progress().puzzles[tiny.slug].attempts == 6


def test_a_read_only_odd_file_is_neither_rewritten_nor_copied(home):
    home.mkdir()
    progress_path().write_text(json.dumps({"puzzles": {"map": {"attempts": "x"}}}))
    os.chmod(progress_path(), 0o444)
    p = load_progress()
    assert len(p.warnings) == 2 and "left as it is" in p.warnings[1]
    assert sorted(os.listdir(home)) == [".progress.json.lock", "progress.json"]


def test_stray_temporary_files_are_removed_when_the_file_is_read(home):
    home.mkdir()
    for name in (".progress.json.0badf00d.tmp", ".progress.json.corrupt-1.1234abcd.tmp"):
        (home / name).write_text("{half")
    (home / ".p01_map.py.0badf00d.tmp").write_text("# a save of the editor")
    load_progress()
    assert sorted(os.listdir(home)) == [".p01_map.py.0badf00d.tmp", ".progress.json.lock"]


def test_a_lock_held_too_long_is_a_message_not_a_hang(home, tiny, monkeypatch):
    monkeypatch.setattr(puzzles.files, "LOCK_TIMEOUT", 0.2)
    record_check(tiny, SimpleNamespace(passed=True, stars=1))
    before = progress_path().read_bytes()
    with puzzles.files.locked(progress_mod.lock_path(progress_path())):         # another holder
        p = record_check(tiny, SimpleNamespace(passed=True, stars=1))
    assert f"process {os.getpid()}" in p.warnings[-1] and "not saved" in p.warnings[-1]
    assert progress_path().read_bytes() == before and p.puzzles[tiny.slug].attempts == 2


def test_a_change_keeps_what_another_process_wrote_meanwhile(home, tiny):
    mine = load_progress()
    other = load_progress()
    record_check(tiny, SimpleNamespace(passed=False, stars=0), other)
    reveal_hint(tiny, other)
    record_check(tiny, SimpleNamespace(passed=True, stars=2), mine)             # holds a stale copy
    entry = load_progress().puzzles[tiny.slug]
    assert (entry.attempts, entry.hints_revealed, entry.best_stars) == (2, 1, 2)
    assert mine.puzzles[tiny.slug] == entry                                     # refreshed in memory too
    assert reveal_hint(tiny, mine) == (2, tiny.hints[1])                        # the next hint, not the first


def test_threads_do_not_lose_updates(home, tiny):
    def check(n):
        for _ in range(n):
            record_check(tiny, SimpleNamespace(passed=True, stars=1))

    workers = [threading.Thread(target=check, args=(15,)) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert load_progress().puzzles[tiny.slug].attempts == 60


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
