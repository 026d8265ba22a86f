"""A few screenshots of stable screens (pytest-textual-snapshot): the layout, not the logic.

The app gets a fixed list of puzzles so that puzzles added to the game do not change the pictures.
Update after a deliberate change with ``pytest tests/tui --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

from tui_helpers import puzzle, use_reference

from tui.app import GpuPuzzlesApp

SIZE = (120, 36)


def small_app() -> GpuPuzzlesApp:
    app = GpuPuzzlesApp(puzzles=[puzzle("map"), puzzle("zip"), puzzle("dot-product")])
    app.animation_level = "none"
    return app


class TestBrowser:
    def test_first_puzzle_page(self, home, snap_compare):
        assert snap_compare(small_app(), terminal_size=SIZE)

    def test_help(self, home, snap_compare):
        assert snap_compare(small_app(), press=["question_mark"], terminal_size=SIZE)


class TestVisualiser:
    def test_shared_memory_phase_1_of_the_dot_product(self, home, snap_compare):
        use_reference("dot-product")

        async def run_before(pilot):
            app = pilot.app
            app.open_puzzle(puzzle("dot-product"))
            await pilot.pause()
            await pilot.press("ctrl+r")
            await app.workers.wait_for_complete()
            await pilot.pause()
            await pilot.press("ctrl+g", "2", "right")
            app.clear_notifications()          # toasts time out: keep them out of the picture
            await pilot.pause()

        assert snap_compare(small_app(), terminal_size=SIZE, run_before=run_before)
