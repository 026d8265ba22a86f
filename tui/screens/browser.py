"""The puzzle browser: chapters and puzzles on the left; on the right the highlighted puzzle's page, or the
chapter's introduction when the cursor is on a chapter."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Header

from ..messages import ChapterHighlighted, HintRevealed, PuzzleHighlighted, PuzzleOpened
from ..widgets.puzzle_page import PageScroll, PuzzlePage, chapter_markdown
from ..widgets.puzzle_tree import PuzzleTree, chapter_introduction, chapter_titles

NARROW = 100
"""Below this many columns the tree gets narrower and shortens the titles."""


class BrowserScreen(Screen):
    """Pick a puzzle, read it, reveal hints; enter opens it in the workspace."""

    BINDINGS = [
        Binding("o", "open", "Open", show=False),
        Binding("h", "hint", "Hint"),
        Binding("n", "next_unsolved", "Next unsolved"),
        Binding("c", "resume", "Continue"),
        Binding("tab", "focus_page", "Page", show=False),
    ]

    current = var(None)
    """The highlighted puzzle (None while the cursor is on a chapter)."""
    chapter: var[int | None] = var(None)
    """The highlighted chapter (None while the cursor is on a puzzle)."""
    narrow: var[bool] = var(False)
    """The terminal is narrower than ``NARROW`` columns."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="browser"):
            yield PuzzleTree(self.app.puzzles, self.app.stars_of, self.app.solution_seen, id="tree")
            with PageScroll(id="page-scroll"):
                yield PuzzlePage(id="page")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one(PuzzleTree).focus()
        last = self.app.puzzle_of(self.app.settings.last_puzzle)
        if last is not None:
            self.call_after_refresh(self.query_one(PuzzleTree).select_puzzle, last.slug)
        elif self.app.puzzles:
            self.current = self.app.puzzles[0]
        self._subtitle()

    def on_resize(self) -> None:
        self.narrow = self.size.width < NARROW

    def watch_narrow(self, narrow: bool) -> None:
        self.set_class(narrow, "-narrow")

    def on_screen_resume(self) -> None:
        tree = self.query_one(PuzzleTree)
        tree.refresh_stars()
        last = self.app.puzzle_of(self.app.settings.last_puzzle)
        if last is not None and last is not self.current:
            tree.select_puzzle(last.slug)             # back from a puzzle: the list is where the player was
        self._show()
        self._subtitle()

    def _subtitle(self) -> None:
        got = sum(self.app.stars_of(p.slug)[0] for p in self.app.puzzles)
        most = sum(self.app.stars_of(p.slug)[1] for p in self.app.puzzles)
        self.sub_title = f"{len(self.app.puzzles)} puzzles · {got} of {most} stars"

    def on_puzzle_highlighted(self, message: PuzzleHighlighted) -> None:
        self.chapter = None
        self.current = message.puzzle

    def on_chapter_highlighted(self, message: ChapterHighlighted) -> None:
        self.current = None
        self.chapter = message.chapter

    def on_puzzle_opened(self, message: PuzzleOpened) -> None:
        self.app.open_puzzle(message.puzzle)

    def on_hint_revealed(self, message: HintRevealed) -> None:
        self._show()

    def watch_current(self) -> None:
        self._show()
        self.query_one("#page-scroll").scroll_home(animate=False)

    def watch_chapter(self) -> None:
        self._show()
        self.query_one("#page-scroll").scroll_home(animate=False)

    def _show(self) -> None:
        page = self.query_one(PuzzlePage)
        if self.chapter is not None:
            number = self.chapter
            page.show_text(chapter_markdown(number, chapter_titles().get(number, ""), chapter_introduction(number),
                                            self.app.chapter_puzzles(number), self.app.stars_of))
            return
        puzzle = self.current
        if puzzle is None:
            return
        got, most = self.app.stars_of(puzzle.slug)
        page.show(puzzle, got, most, self.app.hints_of(puzzle), solution_seen=self.app.solution_seen(puzzle.slug))

    def action_open(self) -> None:
        if self.current is not None:
            self.app.open_puzzle(self.current)

    def action_hint(self) -> None:
        if self.current is not None:
            self.app.reveal_hint(self.current, self)
            self.query_one("#page-scroll").scroll_end(animate=False)

    def action_resume(self) -> None:
        last = self.app.puzzle_of(self.app.settings.last_puzzle) or (self.app.puzzles[:1] or [None])[0]
        if last is not None:
            self.app.open_puzzle(last)

    def action_focus_page(self) -> None:
        tree, page = self.query_one(PuzzleTree), self.query_one("#page-scroll")
        (page if tree.has_focus else tree).focus()

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
