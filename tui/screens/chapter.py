"""A chapter's moments: its introduction before its first puzzle, and its completion."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from ..widgets.puzzle_page import PageScroll
from ..widgets.puzzle_tree import chapter_introduction, chapter_title


class ChapterIntroduction(ModalScreen[bool]):
    """The chapter's introduction; dismisses with True to go on to ``first`` (its first puzzle)."""

    BINDINGS = [
        Binding("enter", "choose(True)", "Start the chapter"),
        Binding("escape", "choose(False)", "Back"),
    ]

    def __init__(self, chapter: int, first):
        super().__init__()
        self.chapter = chapter
        self.first = first

    def compose(self) -> ComposeResult:
        with Vertical(id="chapter"):
            with PageScroll(id="chapter-scroll"):
                yield Markdown(chapter_introduction(self.chapter) or f"# {chapter_title(self.chapter)}")
            yield Static(Text(f"enter: start with puzzle {self.first.number}, {self.first.title} · esc: back",
                              style="bold"), id="chapter-keys")

    def on_mount(self) -> None:
        self.query_one("#chapter-scroll").focus()

    def action_choose(self, go: bool) -> None:
        self.dismiss(go)


class ChapterComplete(ModalScreen):
    """Every puzzle of the chapter has a star. Dismisses with the next chapter's first puzzle, or None."""

    BINDINGS = [
        Binding("enter", "next", "Next chapter"),
        Binding("escape", "stay", "Stay here"),
    ]

    def __init__(self, chapter: int, puzzles: list, stars_of, next_puzzle):
        super().__init__()
        self.chapter = chapter
        self.puzzles = puzzles
        self.stars_of = stars_of
        self.next_puzzle = next_puzzle

    def compose(self) -> ComposeResult:
        got = sum(self.stars_of(p.slug)[0] for p in self.puzzles)
        most = sum(self.stars_of(p.slug)[1] for p in self.puzzles)
        lines = [f"# ★ {chapter_title(self.chapter)}: complete", "",
                 f"Every one of its {len(self.puzzles)} puzzles has a star: **{got} of {most} stars**.", ""]
        for p in self.puzzles:
            earned, top = self.stars_of(p.slug)
            lines.append(f"- {p.number} {p.title} {'★' * earned}{'☆' * max(top - earned, 0)}")
        lines.append("")
        if got < most:
            lines.append("The missing stars are there for the taking: each asks for a kernel that moves fewer "
                         "bytes or wastes less.")
        if self.next_puzzle is not None:
            lines.append(f"\n**enter**: on to {chapter_title(self.next_puzzle.chapter)}, puzzle "
                         f"{self.next_puzzle.number} · **esc**: stay here")
        else:
            lines.append("\nThat was the last chapter. **esc** goes back.")
        with Vertical(id="chapter"), PageScroll(id="chapter-scroll"):
            yield Markdown("\n".join(lines))

    def on_mount(self) -> None:
        self.query_one("#chapter-scroll").focus()

    def action_next(self) -> None:
        self.dismiss(self.next_puzzle)

    def action_stay(self) -> None:
        self.dismiss(None)
