"""Fixtures for the puzzle framework's tests (helpers live in ``puzzle_fixtures.py``).

Every test gets its own ``GPU_PUZZLES_HOME`` (autouse), so no test reads or writes a real player's files.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from puzzle_fixtures import REFERENCE, STARTER, TINY, FakeEngine, write

import gpusim
from puzzles import registry, workspace
from puzzles.model import Puzzle


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    """A fresh, empty player workspace for each test."""
    path = tmp_path / "home"
    monkeypatch.setenv(workspace.ENV_HOME, str(path))
    return path


@pytest.fixture
def tiny(tmp_path, monkeypatch) -> Puzzle:
    """The tiny puzzle, installed as the only puzzle, with its starter and reference in temporary folders."""
    write(tmp_path / "starters", TINY.starter_file, STARTER)
    write(tmp_path / "solutions", TINY.solution_file, REFERENCE)
    monkeypatch.setattr(workspace, "STARTERS_DIR", tmp_path / "starters")
    monkeypatch.setattr(workspace, "SOLUTIONS_DIR", tmp_path / "solutions")
    monkeypatch.setattr(registry, "all_puzzles", lambda: [TINY])
    return TINY


@pytest.fixture
def fake_engine(monkeypatch) -> FakeEngine:
    """``gpusim.launch`` replaced by a scripted ``FakeEngine`` for the length of the test."""
    engine = FakeEngine()
    monkeypatch.setattr(gpusim, "launch", engine, raising=False)
    return engine
