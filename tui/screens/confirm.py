"""Asking before losing work: "save and quit / quit without saving / stay", and yes/no questions."""

from __future__ import annotations

from rich.text import Text
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
            yield Label(f"{self.file_name} has unsaved changes that could not be saved.", id="confirm-question",
                        markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button("Save and quit (s)", id="save", variant="primary")
                yield Button("Quit without saving (d)", id="discard", variant="error")
                yield Button("Stay (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "cancel")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class Confirm(ModalScreen[bool]):
    """A yes/no question before something the player cannot take back; dismisses with True for yes.

    Enter presses the focused button, which starts on "no": only y or a click on "yes" goes ahead.
    """

    BINDINGS = [
        Binding("escape,n", "choose(False)", "No"),
        Binding("y", "choose(True)", "Yes"),
    ]

    def __init__(self, question: str, detail: str, yes: str):
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(self.question, id="confirm-question", markup=False)
            if self.detail:
                yield Label(self.detail, id="confirm-detail", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button("No (esc)", id="no")
                yield Button(Text(f"{self.yes} (y)"), id="yes", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_choose(self, choice: bool) -> None:
        self.dismiss(choice)
