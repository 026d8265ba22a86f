"""Tests for puzzles/workspace.py: where the player's files live, that their work is never overwritten, and
that the starter's copy is whole or absent (a full disk, a killed process)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from puzzle_fixtures import REFERENCE, STARTER

from puzzles import workspace
from puzzles.workspace import WorkspaceError, ensure_starter, reset_to_starter


def test_home_comes_from_the_environment(home):
    assert workspace.home() == home
    assert not home.exists()                       # nothing is created just by asking


def test_home_defaults_to_the_platform_data_dir(monkeypatch):
    monkeypatch.delenv(workspace.ENV_HOME, raising=False)
    import platformdirs

    assert workspace.home() == Path(platformdirs.user_data_dir("gpu-puzzles", appauthor=False))
    monkeypatch.setenv(workspace.ENV_HOME, "   ")
    assert workspace.home().name == "gpu-puzzles"


def test_file_names(tiny, home):
    assert workspace.workspace_path(tiny) == home / "p901_tiny_add.py"
    assert workspace.starter_path(tiny).read_text() == __import__("textwrap").dedent(STARTER).lstrip("\n")
    assert workspace.read_reference(tiny).startswith("from numba import cuda")
    assert "out[i] = a[i] + 1" in REFERENCE


def test_starter_is_copied_once_and_never_overwrites(tiny, home):
    path = ensure_starter(tiny)
    assert path.parent == home and path.read_text() == workspace.starter_path(tiny).read_text()
    path.write_text("# my work\n")
    workspace.starter_path(tiny).write_text("# a newer starter\n")
    assert ensure_starter(tiny) == path
    assert path.read_text() == "# my work\n"


def test_missing_starter_is_a_clear_error(tiny):
    os.remove(workspace.starter_path(tiny))
    with pytest.raises(WorkspaceError, match="starter for puzzle 901"):
        ensure_starter(tiny)


def test_unwritable_home_is_a_clear_error(tiny, tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv(workspace.ENV_HOME, str(blocker / "home"))
    with pytest.raises(WorkspaceError, match="cannot create"):
        ensure_starter(tiny)


def test_reset_keeps_a_backup(tiny):
    path = ensure_starter(tiny)
    path.write_text("# my work\n")
    again, backup = reset_to_starter(tiny)
    assert again == path and path.read_text() == workspace.starter_path(tiny).read_text()
    assert backup is not None and backup.read_text() == "# my work\n" and backup.name.startswith(path.name)
    path.write_text("# more work\n")
    _, second = reset_to_starter(tiny)
    assert second != backup and second.read_text() == "# more work\n" and backup.exists()


def test_missing_reference_is_a_clear_error(tiny):
    os.remove(workspace.reference_path(tiny))
    with pytest.raises(WorkspaceError, match="reference solution for puzzle 901"):
        workspace.read_reference(tiny)


def test_a_failed_copy_leaves_no_file_and_the_next_call_copies_again(tiny, home, monkeypatch):
    import puzzles.files

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(puzzles.files.os, "fsync", full)          # the disk fills up during the copy
        with pytest.raises(WorkspaceError, match="No space left on device"):
            ensure_starter(tiny)
    assert os.listdir(home) == []                               # no empty file, no temporary file
    path = ensure_starter(tiny)
    assert path.read_text() == workspace.starter_path(tiny).read_text()


def test_a_real_write_limit_leaves_no_file(tmp_path):
    """The kernel refuses the write (RLIMIT_FSIZE: what a full disk does to a write) in a real process."""
    home = tmp_path / "home"
    code = textwrap.dedent("""
        import resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        from puzzles import registry, workspace
        puzzle = registry.get(1)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (16, hard))
        try:
            workspace.ensure_starter(puzzle)
        except workspace.WorkspaceError as e:
            print("refused:", e)
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        path = workspace.ensure_starter(puzzle)
        print("same:", path.read_text() == workspace.starter_path(puzzle).read_text())
    """)
    env = dict(os.environ, GPU_PUZZLES_HOME=str(home))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert "refused: cannot create" in out.stdout and "File too large" in out.stdout, out.stderr
    assert "same: True" in out.stdout
    assert [f for f in os.listdir(home) if f.endswith(".tmp")] == []


def test_an_empty_file_left_earlier_is_filled_with_the_starter(tiny, home):
    home.mkdir()
    path = workspace.workspace_path(tiny)
    path.write_text("")
    assert ensure_starter(tiny).read_text() == ""               # just emptied: maybe a save in progress
    old = time.time() - 3600
    os.utime(path, (old, old))
    assert ensure_starter(tiny).read_text() == workspace.starter_path(tiny).read_text()


def test_something_other_than_a_file_is_a_clear_error(tiny, home):
    home.mkdir()
    os.mkfifo(workspace.workspace_path(tiny))
    with pytest.raises(WorkspaceError, match="not a regular file"):
        ensure_starter(tiny)


def test_stray_temporary_files_of_a_killed_save_are_removed(tiny, home):
    home.mkdir()
    name = workspace.workspace_path(tiny).name
    stale, fresh = home / f".{name}.0badf00d.tmp", home / f".{name}.1234abcd.tmp"
    stale.write_text("# half a save")
    fresh.write_text("# a save happening now")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    ensure_starter(tiny)
    assert not stale.exists() and fresh.exists()


def test_the_starter_copy_gets_ordinary_permissions(tiny):
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(ensure_starter(tiny)).st_mode) == 0o666 & ~umask


def test_reset_moves_aside_whatever_is_there(tiny, home):
    home.mkdir()
    os.mkfifo(workspace.workspace_path(tiny))
    path, backup = reset_to_starter(tiny)
    assert stat.S_ISFIFO(os.lstat(backup).st_mode) and path.read_text().startswith("from numba import cuda")
