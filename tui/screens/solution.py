"""The reference solution of a puzzle, read-only, over the workspace (after the player confirmed)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, TextArea

from ..widgets.editor import editor_theme, python_language


class SolutionScreen(ModalScreen):
    """Shows ``text`` (the reference solution); esc closes it. Text can be selected and copied."""

    BINDINGS = [Binding("escape", "dismiss", "Close")]

    def __init__(self, puzzle, text: str):
        super().__init__()
        self.puzzle = puzzle
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="solution"):
            yield Label(f"The reference solution of puzzle {self.puzzle.number}: {self.puzzle.title}   (esc closes)",
                        id="solution-title", markup=False)
            yield TextArea(self.text, language=python_language(), theme=editor_theme(self.app.current_theme.dark),
                           read_only=True, show_line_numbers=True, soft_wrap=False, id="solution-text")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()
