"""Visualiser (6): expected against got, for each output of the launch's test case, differing cells marked.

The judge hands back each compared output (``CaseResult.outputs``: ``OutputValues``, the whole output or a box
of it around the first difference) with the cells its comparison rejected; this only draws them. Each row of
the drawing is two lines: what the kernel left in the output and what the spec expects; cells that differ
are marked in both. The drawing opens on the first difference; ↑ ↓ ← → move, ``a`` goes to the next output.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.binding import Binding
from textual.reactive import var

from ..heat import as_rows, window
from .phase_view import fmt_value
from .report_view import ReportView

WRAP = 8
"""A 1-D output is drawn in rows of this many elements."""
MAX_ROWS = 8
BAD = "bold white on #d62828"
LABEL = 12
"""Columns before the first cell: the row's index and "got"/"want"."""


def _index(index) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


class OutputsView(ReportView):
    title = "Outputs"

    BINDINGS = [
        Binding("up,k", "move(-1, 0)", "Up", show=False),
        Binding("down,j", "move(1, 0)", "Down", show=False),
        Binding("left,h", "move(0, -1)", "Left", show=False),
        Binding("right,l", "move(0, 1)", "Right", show=False),
        Binding("a", "output(1)", "Next output"),
    ]

    row: var[int] = var(-1)
    """First row of the drawing shown (-1: where the first difference is)."""
    column: var[int] = var(-1)
    """First column shown (-1: where the first difference is)."""
    output_index: var[int] = var(0)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.case = None
        self._top = self._left = 0

    def show_case(self, case, report) -> None:
        self.case = case
        self.show(report)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "output":          # "a" is offered only where there is another output to go to
            return len(getattr(self.case, "outputs", None) or {}) > 1
        return True

    def reset(self) -> None:
        self.set_reactive(OutputsView.row, -1)
        self.set_reactive(OutputsView.column, -1)
        self.set_reactive(OutputsView.output_index, 0)

    def draw(self):
        case = self.case
        if case is None:
            return Text("No test case to show.", style="dim")
        values = list((getattr(case, "outputs", None) or {}).values())
        out = Text()
        out.append(f"case {case.name}", style="bold")
        out.append(f"  ·  {case.status}", style="green" if case.status == "pass" else "red")
        faulted = any(f.kind == "fault" for f in case.failures)
        out.append("  ·  the outputs as the case stopped at a fault\n" if faulted else
                   "  ·  the outputs after the case's last launch\n", style="dim")
        if not values:
            return out + Text("\n") + self._without_values(case)
        kept = values[self.output_index % len(values)]
        if len(values) > 1:
            out.append("outputs  ", style="dim")
            out.append(" · ".join(f"[{v.name}]" if v is kept else v.name for v in values), style="bold")
            out.append("   a: next\n", style="dim")
        out.append(kept.name, style="bold")
        out.append(f"  shape {tuple(kept.shape)}, {kept.dtype}  ·  ", style="dim")
        out.append(f"{kept.wrong} of {kept.size} elements differ" if kept.wrong else "every element as expected",
                   style="bold red" if kept.wrong else "green")
        out.append("\n")
        if not kept.whole:
            box = ", ".join(f"{o}:{o + n}" for o, n in zip(kept.origin, kept.got.shape))
            out.append(f"the check kept [{box}] of it, {kept.got.size} elements around the first difference\n",
                       style="dim")
        out.append("\n")
        out.append(self._grid(kept))
        if kept.first_wrong is not None:
            at = tuple(f - o for f, o in zip(kept.first_wrong, kept.origin))
            out.append(f"\nfirst difference: {kept.name}{_index(kept.first_wrong)}: got {fmt_value(kept.got[at])}, "
                       f"expected {fmt_value(kept.expected[at])}", style="bold")
        return out

    def _grid(self, kept) -> Text:
        got, want, bad = kept.got, kept.expected, kept.differs.reshape(-1)
        cells, where = as_rows(np.arange(got.size).reshape(got.shape), WRAP)
        rows, cols = cells.shape
        texts_got = [fmt_value(v) for v in got.reshape(-1)]
        texts_want = [fmt_value(v) for v in want.reshape(-1)]
        cell = max(4, min(10, max(len(t) for t in texts_got + texts_want) + 1))
        fit_cols = max(1, (self.draw_width - LABEL - 1) // (cell + 1))
        focus = 0
        if kept.first_wrong is not None:
            at = tuple(f - o for f, o in zip(kept.first_wrong, kept.origin))
            focus = int(np.ravel_multi_index(at, got.shape)) if got.ndim else 0
        top = focus // cols if self.row < 0 else min(self.row, max(0, rows - MAX_ROWS))
        left = focus % cols if self.column < 0 else min(self.column, max(0, cols - fit_cols))
        r0, r1 = window(rows, MAX_ROWS, top) if self.row < 0 else (top, min(rows, top + MAX_ROWS))
        c0, c1 = window(cols, fit_cols, left) if self.column < 0 else (left, min(cols, left + fit_cols))
        self._top, self._left = r0, c0
        column_base = kept.origin[-1] if got.ndim >= 2 else 0
        out = Text(" " * LABEL, style="dim")
        for c in range(c0, c1):
            out.append(f"{column_base + c:>{cell}} ", style="dim")
        out.append("\n")
        for r in range(r0, r1):
            label = self._row_label(kept, where(r, 0))
            for name, texts in (("got  ", texts_got), ("want ", texts_want)):
                out.append(f"{label:>{LABEL - 6}} ", style="dim")
                out.append(name, style="dim")
                for c in range(c0, c1):
                    k = int(cells[r, c])
                    if k < 0:
                        out.append(" " * (cell + 1))
                        continue
                    style = BAD if bad[k] else ("" if texts is texts_got else "dim")
                    out.append(f"{texts[k]:>{cell}}", style=style)
                    out.append(" ")
                out.append("\n")
                label = ""
        if (r1 - r0, c1 - c0) != (rows, cols):
            out.append(f"(rows {r0 + 1}-{r1} of {rows}, columns {c0 + 1}-{c1} of {cols} of what was kept: "
                       f"↑ ↓ ← → move)\n", style="dim")
        return out

    @staticmethod
    def _row_label(kept, box_index) -> str:
        """The whole output's index of the row's first element: [k] for 1-D, [i] or [i, j, ...] for more."""
        whole = tuple(int(i) + o for i, o in zip(box_index, kept.origin))
        return _index(whole[:-1] if len(whole) >= 2 else whole)

    def _without_values(self, case) -> Text:
        out = Text()
        mismatch = next((f for f in case.failures if f.kind == "mismatch"), None)
        if mismatch is not None and isinstance(mismatch.detail, dict) and mismatch.detail.get("output"):
            d = mismatch.detail
            where = _index(d.get("index", []))
            out.append(f"{d['output']}{where}: expected {d.get('expected')}, got {d.get('got')}", style="bold red")
            out.append(f"\n{d.get('count', '?')} of {d.get('total', '?')} elements differ.\n")
        elif any(f.kind == "fault" for f in case.failures):
            out.append("This case stopped at a fault, before its outputs were compared: the fault's view "
                       "(1 Threads) shows where.\n", style="yellow")
        elif case.failures:
            out.append("This case failed before its outputs were compared (see the results).\n", style="yellow")
        else:
            out.append("The check kept no outputs of this case.\n", style="dim")
        return out

    def action_move(self, rows: int, columns: int) -> None:
        """Scroll the drawing (from where it is now, the first difference's window to begin with)."""
        if rows:
            if self.column < 0:
                self.set_reactive(OutputsView.column, self._left)
            self.row = max(0, self._top + rows)
        if columns:
            if self.row < 0:
                self.set_reactive(OutputsView.row, self._top)
            self.column = max(0, self._left + columns)

    def action_output(self, step: int) -> None:
        self.output_index += step
        self.set_reactive(OutputsView.row, -1)
        self.set_reactive(OutputsView.column, -1)
        self.redraw()

    def watch_row(self) -> None:
        self.redraw()

    def watch_column(self) -> None:
        self.redraw()

    def watch_output_index(self) -> None:
        self.redraw()
