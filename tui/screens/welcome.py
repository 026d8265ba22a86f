"""The first-run welcome: what the game is, the keys that matter, and where to start."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from ..widgets.puzzle_page import PageScroll

WELCOME = """\
# Welcome to gpu-puzzles

You will write GPU kernels in Python, the way numba-cuda runs them on an NVIDIA GPU, and run them here on a
simulated GPU that shows you what every thread did: which element it touched, what shared memory held
after each barrier, how many bytes each line moved, and where a race or an out-of-bounds index happened.
Every puzzle is checked strictly and earns up to three stars.

**How a puzzle goes:** read the task (f6), write the kernel in the editor (your file is saved as you type),
run it with **ctrl+r**, read the verdict (f7), and look at the run with **ctrl+g**.

| key | does |
|---|---|
| enter | open a puzzle from the list |
| ctrl+r | run your kernel on every test case (esc stops a check) |
| ctrl+g | see the run: threads, shared memory, coalescing, banks, roofline, outputs |
| f5 f6 f7 f8 | the editor, the task, the results, what your kernels printed |
| f2 | a hint (they are counted) |
| ctrl+n | on to the next puzzle |
| esc | back |
| f1 | every key |
| ctrl+q | quit (your work is saved) |

**Start with puzzle 1** (Map): it needs four lines.
"""


class WelcomeScreen(ModalScreen[str]):
    """Dismisses with "start" (open puzzle 1) or "browse"."""

    BINDINGS = [
        Binding("enter", "choose('start')", "Start with puzzle 1"),
        Binding("escape", "choose('browse')", "Look around"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="welcome"):
            with PageScroll(id="welcome-scroll"):
                yield Markdown(WELCOME)
            yield Static(Text("enter: start with puzzle 1 · esc: look around first · ↑ ↓ scroll", style="bold"),
                         id="welcome-keys")

    def on_mount(self) -> None:
        self.query_one("#welcome-scroll").focus()

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
