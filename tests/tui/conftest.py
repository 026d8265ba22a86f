"""Fixtures for the TUI tests: a fresh player workspace per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from puzzles import workspace


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """An empty ``GPU_PUZZLES_HOME`` for one test."""
    folder = tmp_path / "home"
    monkeypatch.setenv(workspace.ENV_HOME, str(folder))
    return folder

