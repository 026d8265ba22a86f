"""Issue 10, items 3 and 4: the editor and the file agree, a run checks exactly the editor's text, and
nothing typed is lost — autosave, outside edits, kill -9."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tui_helpers import SIZE, make_app, open_puzzle, pilot_test, run_check, wait_until

from puzzles import registry, workspace
from tui.checking import check_text, snapshot_path
from tui.screens.confirm import Confirm
from tui.screens.workspace import AUTOSAVE_DELAY, AUTOSAVE_MAX

REFERENCE = Path(__file__).resolve().parents[2] / "solutions" / "map.py"


def outside_write(path: Path, text: str) -> None:
    """Another program writes the file (a later mtime, so the change is seen even on a coarse clock)."""
    path.write_text(text)
    later = time.time() + 2
    os.utime(path, (later, later))


@pilot_test
async def test_autosave_writes_the_text_soon_after_typing_stops(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.editor.move_cursor((0, 0))
        await pilot.press(*"# typed")
        assert screen.editor.dirty and not screen.path.read_text().startswith("# typed")
        await wait_until(pilot, lambda: not screen.editor.dirty, timeout=AUTOSAVE_DELAY + 3, what="autosave")
        assert screen.path.read_text().startswith("# typed")
        assert not list(screen.path.parent.glob(".*.tmp"))          # atomic: no temporary file left


@pilot_test
async def test_an_outside_edit_is_loaded_when_the_editor_has_nothing_unsaved(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        outside_write(screen.path, "# from vim\n")
        await wait_until(pilot, lambda: screen.editor.text == "# from vim\n", timeout=5, what="the reload")
        assert not screen.editor.dirty


@pilot_test
async def test_an_outside_edit_is_offered_when_the_editor_has_unsaved_text(home, monkeypatch):
    import tui.screens.workspace as workspace_screen

    monkeypatch.setattr(workspace_screen, "AUTOSAVE_DELAY", 60.0)   # however slow the machine, the outside
    monkeypatch.setattr(workspace_screen, "AUTOSAVE_MAX", 60.0)     # write lands before the autosave
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.editor.move_cursor((0, 0))
        await pilot.press(*"# mine")
        mine = screen.editor.text
        screen._autosave_timer.stop()
        outside_write(screen.path, "# theirs\n")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm), timeout=5, what="the offer")
        assert screen.editor.text == mine              # nothing is replaced without asking
        await pilot.press("y")
        await pilot.pause()
        assert screen.editor.text == "# theirs\n" and not screen.editor.dirty
        kept = list(screen.path.parent.glob(f"{screen.path.name}.unsaved-*"))
        assert len(kept) == 1 and kept[0].read_text() == mine          # and the player's text is kept


@pilot_test
async def test_a_run_checks_the_editors_text_even_if_the_file_changes_meanwhile(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.editor.load_text(REFERENCE.read_text())            # shown, not saved: the file is the starter

        def check_after_an_outside_write(puzzle, text, path, seed=None):
            path.write_text("this is not python (\n")              # someone writes the file mid-check
            return check_text(puzzle, text, path, seed)

        app.runner.check = check_after_an_outside_write
        await run_check(app, pilot)
        result = screen.results.result
        assert result.passed                                      # the editor's text was checked
        assert snapshot_path(screen.path).read_text() == REFERENCE.read_text()


def test_the_snapshot_is_what_the_checker_reads(home):
    from puzzles import registry

    path = workspace.ensure_starter(registry.get("map"))
    result = check_text(registry.get("map"), REFERENCE.read_text(), path)
    assert result.passed and snapshot_path(path).read_text() == REFERENCE.read_text()
    assert path.read_text() != REFERENCE.read_text()              # the player's file was not touched
    broken = check_text(registry.get("map"), "def map_kernel(out, a)\n", path)
    failure = broken.failures[0]
    assert failure.kind == "compile" and failure.filename == str(path) and failure.lineno == 1
    assert str(path) in failure.message and ".checked" not in failure.message   # it names the player's file


CHILD = textwrap.dedent("""
    import asyncio, sys, time
    sys.path.insert(0, {tests!r})
    from tui_helpers import make_app, open_puzzle

    async def main():
        app = make_app()
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_puzzle(app, pilot, "map")
            screen.editor.load_text("")
            for i, ch in enumerate({first!r}):
                await pilot.press(ch)
                await asyncio.sleep(0.05)
            print("typed", flush=True)
            await asyncio.sleep({pause})
            print("idle", flush=True)
            for ch in {second!r}:                   # typing on, until the parent kills the process
                await pilot.press(ch)
                await asyncio.sleep(0.05)
            print("done", flush=True)
            await asyncio.sleep(60)

    asyncio.run(main())
""")


@pytest.mark.slow
def test_kill_9_while_typing_loses_nothing_older_than_the_autosave_bound(home):
    first, second = "abcdefghijklmnopqrstuvwxyz0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXYZ" * 4
    script = CHILD.format(tests=str(Path(__file__).parent), first=first, second=second, pause=AUTOSAVE_DELAY + 1)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, workspace.ENV_HOME: str(home)})
    path = home / "p01_map.py"
    try:
        assert child.stdout.readline().strip() == "typed"
        # 36 keys over ~2 s: the bound saved some of them while typing went on
        assert child.stdout.readline().strip() == "idle"
        assert path.read_text() == first                          # typing stopped: all of it is on disk
        time.sleep(AUTOSAVE_MAX + 0.5)                            # typing goes on without a pause...
        os.kill(child.pid, signal.SIGKILL)                         # ... and the process dies
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    text = path.read_text()
    assert text.startswith(first) and (first + second).startswith(text)   # a whole prefix, never half a file
    assert len(text) > len(first)                                  # typing that went on was saved as well


JOURNAL_CHILD = textwrap.dedent("""
    import asyncio, sys
    sys.path.insert(0, {tests!r})
    import tui.screens.workspace as ws
    ws.AUTOSAVE_DELAY = ws.AUTOSAVE_MAX = 600.0     # no autosave: only the journal can keep the typing
    from tui_helpers import make_app, open_puzzle

    async def main():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_puzzle(app, pilot, "map")
            screen.editor.move_cursor(screen.editor.document.end)
            for ch in {typed!r}:
                await pilot.press(ch)
            await pilot.pause()
            print("typed", flush=True)
            await asyncio.sleep(60)

    asyncio.run(main())
""")


@pytest.mark.slow
def test_kill_9_before_the_autosave_loses_nothing_the_editor_showed(home):
    """Killed between keys and their save: the puzzle reopens with every character that was on screen."""
    typed = "# every key counts"
    script = JOURNAL_CHILD.format(tests=str(Path(__file__).parent), typed=typed)
    path = workspace.ensure_starter(registry.get("map"))
    starter = path.read_text()
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, workspace.ENV_HOME: str(home)})
    try:
        assert child.stdout.readline().strip() == "typed"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    assert path.read_text() == starter                          # not saved: the autosave never ran

    async def reopen():
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_puzzle(app, pilot, "map")
            assert screen.editor.text == starter + typed
            await wait_until(pilot, lambda: path.read_text() == starter + typed, timeout=10, what="the save")
            assert not (home / ".p01_map.py.typing").exists()

    asyncio.run(reopen())


@pilot_test
async def test_loading_an_outside_edit_over_unsaved_text_leaves_no_journal_behind(home, monkeypatch):
    """The unsaved text is kept beside the file once; its journal must go with it. Left behind, the next
    opening of the puzzle said "Text typed before the app stopped is kept as ..." (the app had not stopped)
    and kept the same text a second time."""
    import tui.screens.workspace as workspace_screen
    from tui import files

    monkeypatch.setattr(workspace_screen, "AUTOSAVE_DELAY", 60.0)
    monkeypatch.setattr(workspace_screen, "AUTOSAVE_MAX", 60.0)
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        await pilot.press(*"# mine")
        screen._autosave_timer.stop()
        assert files.journal_path(screen.path).exists()
        outside_write(screen.path, "# theirs\n")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm), timeout=5, what="the offer")
        await pilot.press("y")
        await pilot.pause()
        assert screen.editor.text == "# theirs\n"
        assert not files.journal_path(screen.path).exists()
        await pilot.press("escape")
        await pilot.pause()
        app.clear_notifications()
        screen = await open_puzzle(app, pilot, "map")
        assert screen.editor.text == "# theirs\n" and not screen.editor.dirty
        assert len(list(screen.path.parent.glob(f"{screen.path.name}.unsaved-*"))) == 1   # kept once
        assert not any("stopped" in str(n.message) for n in app._notifications)


@pilot_test
async def test_an_outside_edit_keeps_the_cursor_where_it_was(home):
    """A reload put the cursor at the top of the file: the next key typed went into line 1."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.editor.load_text("a = 1\nb = 2\nc = 3\n")
        screen.save(quiet=True)
        screen.editor.move_cursor((1, 3))
        outside_write(screen.path, "a = 1\nb = 22\nc = 3\nd = 4\n")
        await wait_until(pilot, lambda: screen.editor.text.endswith("d = 4\n"), timeout=5, what="the reload")
        assert screen.editor.cursor_location == (1, 3)
        outside_write(screen.path, "a = 1\n")
        await wait_until(pilot, lambda: screen.editor.text == "a = 1\n", timeout=5, what="the reload")
        assert screen.editor.cursor_location == (1, 0)          # kept inside a shorter file


@pilot_test
async def test_keeping_ones_text_over_an_outside_edit_still_autosaves_it(home, monkeypatch):
    """The autosave waits while the reload is offered; answered "no", the player's text must still reach the
    file soon (it stayed unsaved until the next key), with the outside version kept beside it."""
    import tui.screens.workspace as workspace_screen

    monkeypatch.setattr(workspace_screen, "AUTOSAVE_DELAY", 60.0)
    monkeypatch.setattr(workspace_screen, "AUTOSAVE_MAX", 60.0)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        await pilot.press(*"# mine")
        mine = screen.editor.text
        outside_write(screen.path, "# theirs\n")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm), timeout=5, what="the offer")
        screen._autosave_timer.stop()
        screen._autosave()                         # the autosave's moment comes while the question is open
        assert screen.editor.dirty
        monkeypatch.setattr(workspace_screen, "AUTOSAVE_DELAY", 0.2)
        await pilot.press("n")
        await wait_until(pilot, lambda: not screen.editor.dirty, timeout=5, what="the autosave")
        assert screen.path.read_text() == mine
        kept = list(screen.path.parent.glob(f"{screen.path.name}.outside-edit-*"))
        assert len(kept) == 1 and kept[0].read_text() == "# theirs\n"
