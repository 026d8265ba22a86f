"""The help screen: what each screen is for and its keys."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# gpu-puzzles

Write CUDA kernels in Python, run them on a simulated GPU, and look at what every thread did.

## Puzzle list

| key | does |
|---|---|
| ↑ ↓ | move through the puzzles |
| enter | open the highlighted puzzle in the editor |
| h | reveal the next hint (it is noted in your progress) |
| n | jump to the next puzzle without a star |

## Editor

Your file is the puzzle's starter the first time; it is yours from then on.

| key | does |
|---|---|
| ctrl+s | save (written whole or not at all) |
| ctrl+r | save, then run every test case on the simulator |
| ctrl+g | see the last run: threads, barrier phases, coalescing, banks, roofline |
| ctrl+f | put the cursor on the line of the next fault |
| ctrl+o | edit the file in `$EDITOR` |
| f2 | reveal the next hint |
| f3 | show the reference solution (asks first; noted in your progress) |
| f4 | reset your file to the starter (asks first; your text is kept beside it as `.bak-<time>`) |
| esc | back to the list (your file is saved first) |

## Seeing a run

| key | does |
|---|---|
| 1 … 5 | threads → elements, shared memory by phase, coalescing, bank conflicts, roofline |
| [ ] | previous / next launch (each test case runs one or more) |
| ← → | (phases) previous / next barrier phase; (threads) move the cursor |
| a  b  m | next array · next block · reads or writes |
| g | (roofline) next GPU |
| esc | back to the editor |

## Everywhere

`?` or `f1` shows this help; `q` quits (outside the editor), `ctrl+q` quits from anywhere, and asks first
when there are unsaved changes.
"""


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP)
