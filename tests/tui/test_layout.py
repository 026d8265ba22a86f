"""Issue 10, item 1: the app fits 80×24 and uses 200×60; pages wrap their text and scroll sideways for
diagrams, never cutting them."""

from __future__ import annotations

import pytest
from textual.widgets import Footer
from textual.widgets._footer import FooterKey
from textual.widgets._markdown import MarkdownFence, MarkdownParagraph
from tui_helpers import make_app, open_puzzle, pilot_test, puzzle, run_check, use_reference

from tui.screens.browser import BrowserScreen
from tui.widgets.editor import SolutionEditor
from tui.widgets.puzzle_page import PageScroll
from tui.widgets.results import ResultsView


def visible(app, widget) -> bool:
    """``widget`` is on screen: inside the terminal, with room, and what is drawn at its middle is it."""
    region = widget.region
    width, height = app.size
    if not (region.width >= 30 and region.height >= 3 and region.right <= width and region.bottom <= height):
        return False
    hit, _ = app.screen.get_widget_at(region.x + region.width // 2, region.y + 1)
    return hit is widget or widget in hit.ancestors_with_self


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
@pilot_test
async def test_results_are_visible_after_a_run(home, size):
    use_reference("map")
    app = make_app()
    async with app.run_test(size=size) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        await run_check(app, pilot)
        results = screen.query_one(ResultsView)
        assert results.result is not None and results.result.passed
        assert visible(app, results)
        if size[0] >= 110:                                  # wide: the editor stays beside it
            assert visible(app, screen.query_one(SolutionEditor))
        footer = screen.query_one(Footer)
        keys = list(footer.query(FooterKey))
        assert keys and all(k.region.right <= size[0] for k in keys)       # the footer is not cut
        assert {"ctrl+r", "f7", "escape"} <= {k.key for k in keys}


@pilot_test
async def test_at_80_columns_one_pane_at_a_time_and_the_pane_keys_switch(home):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        editor, results = screen.editor, screen.query_one(ResultsView)
        await pilot.press("f5")
        assert visible(app, editor) and app.focused is editor
        await pilot.press("f7")
        assert visible(app, results) and not editor.display or not visible(app, editor)
        await pilot.press("f6")
        assert screen.side_tab == "task" and visible(app, screen.query_one("#task-scroll"))
        await pilot.press("f8")
        assert screen.side_tab == "console"
        await pilot.press("f5")
        assert visible(app, editor) and app.focused is editor


@pilot_test
async def test_a_wide_diagram_scrolls_sideways_and_the_text_wraps(home):
    rmsnorm = puzzle("rmsnorm")
    longest = max(len(line) for line in rmsnorm.description.splitlines())
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_puzzle(app, pilot, "rmsnorm")
        await pilot.press("f6")
        await pilot.pause()
        scroll = screen.query_one("#task-scroll", PageScroll)
        view = scroll.scrollable_content_region.width
        fences = list(scroll.query(MarkdownFence))
        assert fences and max(f.region.width for f in fences) >= longest - 4      # nothing cut off
        assert scroll.max_scroll_x > 0                                          # it scrolls to them
        assert all(p.region.width <= view for p in scroll.query(MarkdownParagraph))   # text wraps
        scroll.scroll_to(x=scroll.max_scroll_x, animate=False)
        await pilot.pause()
        assert scroll.scroll_x == scroll.max_scroll_x


@pilot_test
async def test_the_browser_fits_80_columns(home):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        browser = app.screen
        assert isinstance(browser, BrowserScreen) and browser.narrow
        tree, page = browser.query_one("#tree"), browser.query_one("#page-scroll")
        assert tree.region.right <= page.region.x and page.region.right <= 80 and page.region.width >= 38
        room = tree.scrollable_content_region.width
        for branch in tree.root.children:                  # chapter labels (with their stars) fit
            assert len(str(branch.label)) + 2 <= room and str(branch.label).endswith("★"), str(branch.label)
            for leaf in branch.children:                   # and so do the puzzles' (guide, number, title...)
                assert len(str(leaf.label)) + 4 <= room, str(leaf.label)


@pilot_test
async def test_at_80_columns_the_header_keeps_the_stars_and_the_unsaved_mark_of_a_long_title(home):
    """The header is one line, cut at its end: with the file name first, "Puzzle 48: Coalesced naive matmul"
    lost its stars and the unsaved mark at 80 columns. They come first now; the file name may be cut."""
    from textual.widgets._header import HeaderTitle

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_puzzle(app, pilot, "matmul-coalesced")
        title = screen.query_one(HeaderTitle)
        await pilot.pause()
        shown = "".join(segment.text for segment in title.render_line(0))
        assert "☆☆☆" in shown, shown
        screen.editor.insert("# x\n")
        await pilot.pause()
        shown = "".join(segment.text for segment in title.render_line(0))
        assert "☆☆☆ ● unsaved" in shown, shown
