"""Screenshots of the app's screens (pytest-textual-snapshot): the layout, not the logic.

Home, a puzzle, its results, the console (what the kernels printed) and each of the six views of a run, each
at 80×24 and 120×40 and in a dark and a light theme (all four; a theme can hide what a size shows, and the
other way round).

The app gets a fixed list of puzzles, so that puzzles added to the game do not change the pictures, and
checks made once on fixed seeds, so that the pictures do not wait for the simulator: the dot product's
reference for every screen but the outputs, which shows a dot product that starts its tree at a quarter of
the block (every partial sum is wrong) as the judge handed it back, and the console, which shows the
reference with a ``print`` of each block's partial sum. Update after a deliberate change with
``pytest tests/tui --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

import functools

import pytest
from tui_helpers import puzzle, use_reference

from tui.app import GpuPuzzlesApp
from tui.checking import check_text

SMALL, LARGE = (80, 24), (120, 40)
DARK, LIGHT = "textual-dark", "textual-light"
SCREENS = ("home", "puzzle", "results", "console", "threads", "phases", "coalescing", "banks", "roofline",
           "outputs")
SEED = 2026   # the check's random cases, fixed so that the pictures do not change from run to run
VIEW_KEY = {"threads": "1", "phases": "2", "coalescing": "3", "banks": "4", "roofline": "5", "outputs": "6"}


PRINT = '        print("block", cuda.blockIdx.x, "partial sum", s[0])\n'


@functools.cache
def dot_product_check(wrong: bool = False, printing: bool = False):
    """One check of the reference dot product (``wrong``: with its tree started at TPB // 4; ``printing``:
    thread 0 of each block prints the block's partial sum)."""
    p = puzzle("dot-product")
    path = use_reference("dot-product")
    text = path.read_text()
    if wrong:
        text = text.replace("stride = TPB // 2", "stride = TPB // 4")
    if printing:
        text = text.replace("        out[cuda.blockIdx.x] = s[0]\n", "        out[cuda.blockIdx.x] = s[0]\n" + PRINT)
    assert text != path.read_text() or not (wrong or printing)
    return check_text(p, text, path, seed=SEED)


def app_for(theme: str, with_result: bool, wrong: bool = False, printing: bool = False) -> GpuPuzzlesApp:
    app = GpuPuzzlesApp(puzzles=[puzzle("map"), puzzle("zip"), puzzle("dot-product")])
    app.animation_level = "none"
    app.settings.welcome_seen = True
    app.settings.introductions_seen = list(range(1, 100))
    app.settings.writable = False
    app.theme = theme
    if with_result:
        app.results["dot-product"] = dot_product_check(wrong, printing)
    return app


def cases():
    for screen in SCREENS:
        for size in (SMALL, LARGE):
            for theme in (DARK, LIGHT):
                yield pytest.param(screen, size, theme, id=f"{screen}-{size[0]}x{size[1]}-{theme.split('-')[1]}")


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
            if screen == "console":
                await pilot.press("f8")
            if screen in VIEW_KEY:
                await pilot.press("ctrl+g", VIEW_KEY[screen])
            if screen == "phases":
                await pilot.press("right", "full_stop", "full_stop")
            await pilot.pause()
            if screen in ("puzzle", "results", "console"):
                # TextArea caches lines without noting focus when the cursor does not blink: redraw them
                app.screen.editor._line_cache.clear()
                app.screen.editor.refresh()
            app.clear_notifications()          # toasts time out: keep them out of the picture
            await pilot.wait_for_scheduled_animations()
            for _ in range(3):                 # a page reflows once its scrollbar is placed: let it settle
                await pilot.pause(0.1)

        app = app_for(theme, with_result=screen not in ("home", "puzzle"), wrong=screen == "outputs",
                      printing=screen == "console")
        assert snap_compare(app, terminal_size=size, run_before=run_before)


class TestHelp:
    def test_help(self, home, snap_compare):
        assert snap_compare(app_for(DARK, False), press=["f1"], terminal_size=LARGE)
