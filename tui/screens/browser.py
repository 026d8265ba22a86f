"""The puzzle browser: chapters and puzzles on the left, the highlighted puzzle's page on the right."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Header

from ..messages import HintRevealed, PuzzleHighlighted, PuzzleOpened
from ..widgets.puzzle_page import PuzzlePage
from ..widgets.puzzle_tree import PuzzleTree


class BrowserScreen(Screen):
    """Pick a puzzle, read it, reveal hints; enter opens it in the workspace."""

    BINDINGS = [
        Binding("o", "open", "Open"),
        Binding("h", "hint", "Reveal a hint"),
        Binding("n", "next_unsolved", "Next unsolved"),
    ]

    current = var(None)
    """The highlighted puzzle."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="browser"):
            yield PuzzleTree(self.app.puzzles, self.app.stars_of, id="tree")
            with VerticalScroll(id="page-scroll"):
                yield PuzzlePage(id="page")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(PuzzleTree).focus()
        if self.app.puzzles:
            self.current = self.app.puzzles[0]
        self._subtitle()

    def on_screen_resume(self) -> None:
        self.query_one(PuzzleTree).refresh_stars()
        self._show()
        self._subtitle()

    def _subtitle(self) -> None:
        got = sum(self.app.stars_of(p.slug)[0] for p in self.app.puzzles)
        most = sum(self.app.stars_of(p.slug)[1] for p in self.app.puzzles)
        self.sub_title = f"{len(self.app.puzzles)} puzzles · {got} of {most} stars"

    def on_puzzle_highlighted(self, message: PuzzleHighlighted) -> None:
        self.current = message.puzzle

    def on_puzzle_opened(self, message: PuzzleOpened) -> None:
        self.app.open_puzzle(message.puzzle)

    def on_hint_revealed(self, message: HintRevealed) -> None:
        self._show()

    def watch_current(self) -> None:
        self._show()
        self.query_one("#page-scroll").scroll_home(animate=False)

    def _show(self) -> None:
        puzzle = self.current
        if puzzle is None:
            return
        got, most = self.app.stars_of(puzzle.slug)
        self.query_one(PuzzlePage).show(puzzle, got, most, self.app.hints_of(puzzle),
                                        solution_seen=self.app.solution_seen(puzzle.slug))

    def action_open(self) -> None:
        if self.current is not None:
            self.app.open_puzzle(self.current)

    def action_hint(self) -> None:
        if self.current is not None:
            self.app.reveal_hint(self.current, self)
            self.query_one("#page-scroll").scroll_end(animate=False)

    def action_next_unsolved(self) -> None:
        puzzles = self.app.puzzles
        if not puzzles:
            return
        start = puzzles.index(self.current) + 1 if self.current in puzzles else 0
        for puzzle in puzzles[start:] + puzzles[:start]:
            if self.app.stars_of(puzzle.slug)[0] == 0:
                self.query_one(PuzzleTree).select_puzzle(puzzle.slug)
                return
        self.notify("Every puzzle has at least one star.")
