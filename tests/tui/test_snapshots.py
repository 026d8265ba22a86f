"""Screenshots of the app's screens (pytest-textual-snapshot): the layout, not the logic.

Home, a puzzle, its results and each of the six views of a run, at 80×24 and 120×40, in a dark and a light
theme: every screen at both sizes and in both themes (the dark one at one size, the light one at the other,
swapped from one screen to the next), which keeps the count at two pictures per screen.

The app gets a fixed list of puzzles, so that puzzles added to the game do not change the pictures, and one
check of the dot product's reference, made once, so that the pictures do not wait for the simulator. Update
after a deliberate change with ``pytest tests/tui --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from tui_helpers import puzzle, use_reference

from puzzles.checker import case_generator
from tui.app import GpuPuzzlesApp
from tui.checking import check_text

SMALL, LARGE = (80, 24), (120, 40)
DARK, LIGHT = "textual-dark", "textual-light"
SCREENS = ("home", "puzzle", "results", "threads", "phases", "coalescing", "banks", "roofline", "outputs")
SEED = 2026   # the check's random cases, fixed so that the pictures do not change from run to run
VIEW_KEY = {"threads": "1", "phases": "2", "coalescing": "3", "banks": "4", "roofline": "5", "outputs": "6"}


@functools.cache
def dot_product_check():
    """One check of the reference dot product, with each case's outputs against the spec attached (the
    judge hands them back; here the got values are the expected ones with two cells changed, to draw)."""
    p = puzzle("dot-product")
    path = use_reference("dot-product")
    result = check_text(p, path.read_text(), path, seed=SEED)
    for case, spec_case in zip(result.cases, p.make_cases(case_generator(SEED))):
        expected = p.spec(**{k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in spec_case.buffers.items()})
        case.expected = {name: np.asarray(expected[name]) for name in p.outputs}
        case.outputs = {name: np.asarray(expected[name]).copy() for name in p.outputs}
        got = case.outputs[p.outputs[0]].reshape(-1)
        got[: min(2, got.size)] += 1
    return result


def app_for(theme: str, with_result: bool) -> GpuPuzzlesApp:
    app = GpuPuzzlesApp(puzzles=[puzzle("map"), puzzle("zip"), puzzle("dot-product")])
    app.animation_level = "none"
    app.settings.welcome_seen = True
    app.settings.introductions_seen = list(range(1, 100))
    app.settings.writable = False
    app.theme = theme
    if with_result:
        app.results["dot-product"] = dot_product_check()
    return app


def cases():
    for i, screen in enumerate(SCREENS):
        first, second = (DARK, LIGHT) if i % 2 == 0 else (LIGHT, DARK)
        yield pytest.param(screen, SMALL, first, id=f"{screen}-80x24-{first.split('-')[1]}")
        yield pytest.param(screen, LARGE, second, id=f"{screen}-120x40-{second.split('-')[1]}")


class TestScreens:
    @pytest.mark.parametrize("screen,size,theme", list(cases()))
    def test_screen(self, home, snap_compare, screen, size, theme):
        use_reference("dot-product")

        async def run_before(pilot):
            app = pilot.app
            if screen != "home":
                app.open_puzzle(puzzle("dot-product"))
                await pilot.pause()
                app.screen.editor.cursor_blink = False      # a blinking cursor makes pictures differ
            if screen == "puzzle":                      # focus decides whether the cursor is drawn
                await pilot.press("f5" if size == LARGE else "f6")
            if screen == "results":
                await pilot.press("f7")
            if screen in VIEW_KEY:
                await pilot.press("ctrl+g", VIEW_KEY[screen])
            if screen == "phases":
                await pilot.press("right", "full_stop", "full_stop")
            await pilot.pause()
            if screen in ("puzzle", "results"):
                # TextArea caches lines without noting focus when the cursor does not blink: redraw them
                app.screen.editor._line_cache.clear()
                app.screen.editor.refresh()
            app.clear_notifications()          # toasts time out: keep them out of the picture
            await pilot.pause()

        assert snap_compare(app_for(theme, screen not in ("home", "puzzle")), terminal_size=size,
                            run_before=run_before)


class TestHelp:
    def test_help(self, home, snap_compare):
        assert snap_compare(app_for(DARK, False), press=["f1"], terminal_size=LARGE)
