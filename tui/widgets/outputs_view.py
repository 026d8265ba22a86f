"""Visualiser (f): expected against got, for each output of the launch's test case, differing cells marked.

Each row of the drawing is two lines: what the kernel left in the output, and what the spec expects; cells
that differ are red in both. The drawing starts at the first difference; ↑ ↓ move through the rows and
``a`` goes to the next output.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.binding import Binding
from textual.reactive import var

from ..heat import as_rows, window
from ..outputs import output_pairs
from .phase_view import fmt_value
from .report_view import ReportView

WRAP = 8
MAX_ROWS = 8
BAD = "bold white on #d62828"


class OutputsView(ReportView):
    title = "Outputs"

    BINDINGS = [
        Binding("up,k", "row(-1)", "Up", show=False),
        Binding("down,j", "row(1)", "Down", show=False),
        Binding("a", "output(1)", "Next output"),
    ]

    row: var[int] = var(-1)
    """First row of the drawing shown (-1: the row of the first difference)."""
    output_index: var[int] = var(0)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.case = None
        self.puzzle = None

    def show_case(self, case, puzzle, report) -> None:
        self.case, self.puzzle = case, puzzle
        self.show(report)

    def reset(self) -> None:
        self.set_reactive(OutputsView.row, -1)
        self.set_reactive(OutputsView.output_index, 0)

    def draw(self):
        case = self.case
        if case is None:
            return Text("No test case to show.", style="dim")
        pairs = output_pairs(case, self.puzzle)
        out = Text()
        out.append(f"case {case.name}", style="bold")
        out.append(f"  ·  {case.status}", style="green" if case.status == "pass" else "red")
        out.append("  ·  the outputs after the case's last launch\n\n", style="dim")
        if not pairs:
            return out + self._without_pairs(case)
        pair = pairs[self.output_index % len(pairs)]
        out.append("outputs  ", style="dim")
        out.append(" · ".join(f"[{p.name}]" if p is pair else p.name for p in pairs) + "\n", style="bold")
        wrong = pair.wrong
        out.append(f"{pair.name}", style="bold")
        out.append(f"  shape {tuple(pair.got.shape)}, {pair.got.dtype}  ·  ", style="dim")
        out.append(f"{wrong} of {pair.got.size} elements differ" if wrong else "every element as expected",
                   style="bold red" if wrong else "green")
        out.append("\n\n")
        got, _ = as_rows(np.arange(pair.got.size).reshape(pair.got.shape), WRAP)
        rows, cols = got.shape
        flat_got, flat_want = pair.got.reshape(-1), pair.expected.reshape(-1)
        flat_bad = pair.differs.reshape(-1)
        texts_got = [fmt_value(v) for v in flat_got]
        texts_want = [fmt_value(v) for v in flat_want]
        cell = max(4, min(10, max(len(t) for t in texts_got + texts_want) + 1))
        width = self.draw_width
        fit_cols = max(1, (width - 13) // (cell + 1))
        first = pair.first_wrong()
        focus_row = 0
        if first is not None:
            flat_first = int(np.ravel_multi_index(first, pair.got.shape)) if pair.got.ndim else 0
            focus_row = flat_first // cols
        top = focus_row if self.row < 0 else min(self.row, rows - 1)
        self._top = top
        c_focus = (int(np.ravel_multi_index(first, pair.got.shape)) % cols) if first is not None else 0
        c0, c1 = window(cols, fit_cols, c_focus)
        r0, r1 = window(rows, MAX_ROWS, top)
        out.append(" " * 12)
        for c in range(c0, c1):
            out.append(f"{c:>{cell}} ", style="dim")
        out.append("\n")
        for r in range(r0, r1):
            for label, texts in ((f"[{r * cols}]" if pair.got.ndim == 1 else f"[{r}]", texts_got),
                                 ("", texts_want)):
                out.append(f"{label:>6} ", style="dim")
                out.append("got  " if texts is texts_got else "want ", style="dim")
                for c in range(c0, c1):
                    k = int(got[r, c])
                    if k < 0:
                        out.append(" " * (cell + 1))
                        continue
                    style = BAD if flat_bad[k] else ("" if texts is texts_got else "dim")
                    out.append(f"{texts[k]:>{cell}}", style=style)
                    out.append(" ")
                out.append("\n")
        if (r1 - r0, c1 - c0) != (rows, cols):
            out.append(f"(rows {r0}-{r1 - 1} of {rows}, columns {c0}-{c1 - 1} of {cols}; ↑ ↓ scroll)\n", style="dim")
        if first is not None:
            where = "[" + ", ".join(str(i) for i in first) + "]"
            out.append(f"\nfirst difference: {pair.name}{where}: got {fmt_value(pair.got[first])}, expected "
                       f"{fmt_value(pair.expected[first])}", style="bold")
        return out

    def _without_pairs(self, case) -> Text:
        out = Text()
        mismatch = next((f for f in case.failures if f.kind == "mismatch"), None)
        if mismatch is not None and isinstance(mismatch.detail, dict) and mismatch.detail.get("output"):
            d = mismatch.detail
            where = "[" + ", ".join(str(i) for i in d.get("index", [])) + "]"
            out.append(f"{d['output']}{where}: expected {d.get('expected')}, got {d.get('got')}", style="bold red")
            out.append(f"\n{d.get('count', '?')} of {d.get('total', '?')} elements differ.\n")
        elif case.status == "pass":
            out.append("Every output matches the spec.\n", style="green")
        elif case.failures:
            out.append("This case failed before its outputs were compared (see the results).\n", style="yellow")
        out.append("\nThe check did not hand back this case's outputs, so the cell-by-cell comparison cannot be "
                   "drawn.", style="dim")
        return out

    def action_row(self, step: int) -> None:
        self.row = max(0, getattr(self, "_top", 0) + step)

    def action_output(self, step: int) -> None:
        self.output_index += step
        self.row = -1

    def watch_row(self) -> None:
        self.redraw()

    def watch_output_index(self) -> None:
        self.redraw()
