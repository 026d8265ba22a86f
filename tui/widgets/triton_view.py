"""The workspace's Triton tab: the Triton program the editor's kernel becomes, and graduate mode's table for it.

ctrl+t (in the workspace) brings the tab to the front and starts both, in the background: the program
(``puzzles.graduate.triton_preview.program``) as soon as it is translated, then the run on the GPU where
there is one, else through Triton's interpreter (``triton_preview.run``). Everything is computed by
puzzles/gpusim in child processes; this widget only draws what they return.
"""

from __future__ import annotations

import textwrap
import threading

from rich.cells import cell_len
from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

HINT = "ctrl+t translates the kernel in the editor into a Triton program (one program per CUDA block) and runs it."


def triton_tab() -> ComposeResult:
    """The tab's content, for ``WorkspaceScreen``."""
    with TritonScroll(id="triton-scroll", classes="side-scroll"):
        yield TritonView(id="triton")


class TritonScroll(VerticalScroll):
    """Scrolls both ways: the program's lines are as long as they are, the sentences wrap to the view."""

    DEFAULT_CSS = """
    TritonScroll { overflow-x: auto; }
    TritonScroll > TritonView { min-width: 100%; }
    """

    def on_resize(self) -> None:
        self.query_one(TritonView).redraw()


class TritonView(Static):
    def __init__(self, **kwargs):
        super().__init__(Text(HINT, style="dim"), **kwargs)
        self._generation = 0
        self._program: Text | Syntax = Text("")
        self._run: Text = Text("")
        self._run_is_prose = True
        self._hint = True

    def start(self, puzzle, text: str, path) -> None:
        """Translate and run ``text`` (the editor's) for ``puzzle``; a newer start replaces an older one."""
        self._generation += 1
        gen = self._generation
        self._hint = False
        self._program = Text("translating…", style="dim")
        self._run = Text("")
        self._draw()
        threading.Thread(target=self._work, args=(gen, puzzle, text, path), daemon=True).start()

    def _work(self, gen: int, puzzle, text: str, path) -> None:
        from puzzles.graduate import triton_preview

        got = triton_preview.program(puzzle, text, path)
        self._post(gen, program=got)
        if not got.ok:
            return
        why = triton_preview.missing_line()
        if why is not None:
            self._post(gen, run=triton_preview.Preview(False, why))
            return
        self._post(gen, run=triton_preview.Preview(True, "running it (on the GPU if there is one, else through "
                                                           "Triton's interpreter)…"), pending=True)
        self._post(gen, run=triton_preview.run(puzzle, text, path))

    def _post(self, gen: int, program=None, run=None, pending: bool = False) -> None:
        def apply() -> None:
            if gen != self._generation:
                return                              # a newer ctrl+t took over
            if program is not None:
                self._program = (Syntax(program.text, "python", word_wrap=False, line_numbers=False,
                                        background_color="default") if program.ok
                                 else Text(program.text, style="red"))
            if run is not None:
                style = "dim" if pending else ("" if run.ok else "yellow")
                self._run = Text(run.text, style=style)
                self._run_is_prose = pending or not run.ok       # a sentence, not graduate mode's table
            self._draw()

        try:
            self.app.call_from_thread(apply)
        except Exception:                           # the app is closing
            pass

    def redraw(self) -> None:
        self._draw()

    def _visible(self) -> int:
        parent = self.parent
        return max(parent.scrollable_content_region.width if parent is not None else 0, 30)

    def _wrapped(self, text: Text) -> Text:
        """A sentence wrapped to the visible width (the view itself is as wide as the program's longest line)."""
        width = self._visible() - 1
        lines = [textwrap.fill(line, width) or "" for line in text.plain.splitlines()]
        return Text("\n".join(lines), style=text.style)

    def _draw(self) -> None:
        if self._hint:
            self._fit(self._wrapped(Text(HINT, style="dim")))
            return
        code = isinstance(self._program, Syntax)
        program = self._program if code else self._wrapped(self._program)
        wide = [self._program.code] if code else []
        if not self._run.plain:
            self._fit(program, wide)
            return
        run = self._wrapped(self._run) if self._run_is_prose else self._run
        if not self._run_is_prose:
            wide.append(self._run.plain)
        self._fit(Group(run, Text(""), program), wide)

    def _fit(self, renderable, wide: list[str] = ()) -> None:
        """Show ``renderable``, as wide as the longest line of the ``wide`` texts (the program, the table) —
        the scroller moves sideways over them — and no narrower than the pane."""
        longest = max((cell_len(line.rstrip()) for text in wide for line in text.splitlines()), default=0)
        self.styles.width = max(longest + 1, self._visible())
        self.update(renderable)


__all__ = ["TritonView", "triton_tab"]
