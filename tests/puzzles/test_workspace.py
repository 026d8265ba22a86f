"""Tests for puzzles/workspace.py: where the player's files live, and that their work is never overwritten."""

from __future__ import annotations

import os
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
