"""Fixtures for the puzzle framework's tests (helpers live in ``puzzle_fixtures.py``).

Every test gets its own ``GPU_PUZZLES_HOME`` (autouse), so no test reads or writes a real player's files, and
PTX compiling only where a test asks for it. ``judge`` is one warm ``JudgeWorker`` for the whole session.
"""

from __future__ import annotations

import os
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
    monkeypatch.setenv("GPU_PUZZLES_PTX", "0")     # the same suite with or without numba-cuda's compiler
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


@pytest.fixture(scope="session")
def judge():
    """One warm judging process shared by every test that needs it (each costs seconds to start)."""
    from puzzles.judge.worker import JudgeWorker

    worker = JudgeWorker(env={**os.environ, "GPU_PUZZLES_PTX": "0"})
    worker.start()
    yield worker
    worker.close()


@pytest.fixture
def fake_engine(monkeypatch) -> FakeEngine:
    """``gpusim.launch`` replaced by a scripted ``FakeEngine`` for the length of the test."""
    engine = FakeEngine()
    monkeypatch.setattr(gpusim, "launch", engine, raising=False)
    return engine
