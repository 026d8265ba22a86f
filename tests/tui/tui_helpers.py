"""Helpers for the TUI tests: put a reference solution in place, render to text, drive a check."""

from __future__ import annotations

import asyncio
import functools
import shutil
from pathlib import Path

from rich.console import Console

from puzzles import registry, workspace

SIZE = (140, 45)


def pilot_test(test):
    """Run an ``async def`` test with ``asyncio.run`` (the project has no async plugin for pytest)."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return run


def make_app():
    """The app, with animations off (tests wait for state, not for tabs to slide)."""
    from tui.app import GpuPuzzlesApp

    app = GpuPuzzlesApp()
    app.animation_level = "none"
    return app


def puzzle(slug: str):
    return registry.get(slug)


def use_reference(slug: str) -> Path:
    """Put the reference solution where the player's file for ``slug`` goes; return that path."""
    p = puzzle(slug)
    target = workspace.workspace_path(p)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(workspace.reference_path(p), target)
    return target


def plain(renderable, width: int = 130) -> str:
    """What a Rich renderable looks like as plain text."""
    console = Console(width=width, record=True, color_system=None, file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text()


async def open_puzzle(app, pilot, slug: str):
    """Open ``slug`` from the browser; returns the workspace screen."""
    app.open_puzzle(puzzle(slug))
    await pilot.pause()
    return app.screen


async def run_check(app, pilot):
    """ctrl+r, then wait for the worker thread and the result message."""
    await pilot.press("ctrl+r")
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
