"""The help screen: what each screen is for and its keys."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Markdown

from ..widgets.puzzle_page import PageScroll

HELP = """\
# gpu-puzzles

Write CUDA kernels in Python, run them on a simulated GPU, and look at what every thread did.

## Puzzle list

| key | does |
|---|---|
| ↑ ↓ | move through the chapters and puzzles (a chapter shows its introduction) |
| enter | open the highlighted puzzle in the editor |
| c | continue with the puzzle you had open last |
| h | reveal the next hint (it is noted in your progress) |
| n | jump to the next puzzle without a star |
| tab | move between the list and the page (← → scroll a wide diagram) |

◆ in the list marks a puzzle whose reference solution you have seen.

## Editor

Your file is the puzzle's starter the first time; it is yours from then on. It is saved as you type.
Enter keeps the indentation (one level more after a `:`); Backspace in the indentation goes back a level.
On a narrow terminal one pane is shown at a time: the pane keys switch, and typing always goes to the editor.

| key | does |
|---|---|
| ctrl+r | run every test case on the simulator (exactly the text in the editor), on freshly drawn random cases |
| ctrl+l | run again on the same cases as the last check (its seed, shown in the results) |
| esc or ctrl+c | while a check runs: stop it |
| ctrl+g | see the last run: threads, shared memory and its values by phase, coalescing, banks, roofline, outputs |
| f5 | the editor |
| f6 | the task (the puzzle's page) |
| f7 | the results of the last check |
| f8 | the console: what your kernels print() |
| ctrl+t | your kernel as a Triton program (one per CUDA block), run on the GPU or Triton's interpreter |
| ctrl+f | put the cursor on the line of the next fault |
| ctrl+n | on to the next puzzle (your file is saved) |
| f2 | reveal the next hint |
| f3 | show the reference solution (asks first; noted in your progress) |
| f4 | reset your file to the starter (asks first; your text is kept beside it as `.bak-<time>`) |
| ctrl+s | save now |
| ctrl+o | edit the file in `$EDITOR` |
| esc | back to the list |

## Seeing a run

| key | does |
|---|---|
| 1 … 6 | threads → elements, shared memory by phase, coalescing, bank conflicts, roofline, expected against got |
| [ ] | previous / next launch (each test case runs one or more) |
| ← → ↑ ↓ | move the cursor over the cells; (phases) ← → change the barrier phase; (outputs) scroll |
| , . | (phases) move the cursor over the slots |
| a  b  m | next array (or output) · next block · reads, writes or blocks |
| g | (roofline) next GPU |
| esc | back to the editor |

## Everywhere

| key | does |
|---|---|
| f1 | this help (`?` too, outside the editor) |
| f9 | save the screen as an SVG picture in your workspace's `screenshots` folder |
| f10 | switch between a dark and a light theme (the command palette, ctrl+p, has every theme; your choice is kept) |
| q | quit (outside the editor) |
| ctrl+q | quit from anywhere (your work is saved first) |
"""


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help"), PageScroll(id="help-scroll"):
            yield Markdown(HELP)

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()
