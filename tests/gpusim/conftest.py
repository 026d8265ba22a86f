"""Fixtures for the engine's tests (helpers live in ``simkit.py``)."""

from __future__ import annotations

import importlib

import pytest


@pytest.fixture
def no_back_end(monkeypatch):
    """Fail the test if the lanes back end is asked to generate code: what the front end rejects must be
    rejected before any back end runs."""
    def refuse(*args, **kwargs):
        raise AssertionError("the back end ran for a kernel the front end should have rejected")

    monkeypatch.setattr(importlib.import_module("gpusim.launch"), "generate", refuse)
