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


def make_app(new_player: bool = False, puzzles=None):
    """The app, with animations off (tests wait for state, not for tabs to slide).

    Unless ``new_player``, the welcome and the chapter introductions count as seen, so tests start in the
    browser and open puzzles directly.
    """
    from tui.app import GpuPuzzlesApp

    app = GpuPuzzlesApp(puzzles=puzzles)
    app.animation_level = "none"
    if not new_player:
        app.settings.welcome_seen = True
        app.settings.introductions_seen = list(range(1, 100))
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
    screen = app.screen
    await wait_until(pilot, lambda: screen.cursor_placed, timeout=10, what="the opening cursor")
    return screen


async def run_check(app, pilot, timeout: float = 60.0):
    """ctrl+r, then wait until the check's result has arrived and is shown."""
    await pilot.press("ctrl+r")
    await wait_for_check(app, pilot, timeout)


async def wait_for_check(app, pilot, timeout: float = 60.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while app.checking is not None or app.runner.running:
        if loop.time() > end:
            raise TimeoutError("the check did not finish")
        await asyncio.sleep(0.02)
    await pilot.pause()
    await pilot.pause()


async def wait_until(pilot, condition, timeout: float = 60.0, what: str = "the condition"):
    """Pause until ``condition()`` is true (or fail after ``timeout`` seconds)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise TimeoutError(f"{what} did not happen within {timeout} s")
        await pilot.pause(0.02)
