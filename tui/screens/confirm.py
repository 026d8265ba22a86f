"""Asking before losing work: "save and quit / quit without saving / stay"."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class ConfirmQuit(ModalScreen[str]):
    """Dismisses with "save", "discard" or "cancel"."""

    BINDINGS = [
        Binding("escape,c", "choose('cancel')", "Stay"),
        Binding("s", "choose('save')", "Save and quit"),
        Binding("d", "choose('discard')", "Quit without saving"),
    ]

    def __init__(self, file_name: str):
        super().__init__()
        self.file_name = file_name

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(f"{self.file_name} has unsaved changes.", id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button("Save and quit (s)", id="save", variant="primary")
                yield Button("Quit without saving (d)", id="discard", variant="error")
                yield Button("Stay (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "cancel")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
