"""Visualiser (a): threads → elements of one array, as a heat grid of per-element read or write counts.

Each cell is one element; its colour is how many lane-accesses read (or wrote) it in the whole launch, and
its number is the global linear id of the first thread that did (from the recorded trace). The cursor picks
an element; the line under the grid names the threads that touched it.
"""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.text import Text
from textual.binding import Binding
from textual.reactive import var

from .. import breakdown
from ..heat import as_rows, heat_style, legend, window
from .report_view import ReportView, not_recorded

MAX_ROWS = 20


def _xyz(v) -> str:
    return "(" + ", ".join(str(int(x)) for x in v) + ")" if v is not None else "?"

WRAP = 16


class ThreadMap(ReportView):
    title = "Threads → elements"

    BINDINGS = [
        Binding("up,k", "move(-1, 0)", "Up", show=False),
        Binding("down,j", "move(1, 0)", "Down", show=False),
        Binding("left,h", "move(0, -1)", "Left", show=False),
        Binding("right,l", "move(0, 1)", "Right", show=False),
        Binding("a", "array(1)", "Next array"),
        Binding("A", "array(-1)", "Prev array", show=False),
        Binding("m", "mode", "Reads/writes"),
        Binding("b", "block(1)", "Next block"),
        Binding("B", "block(-1)", "Prev block", show=False),
    ]

    array_index: var[int] = var(0)
    """Which of the launch's arrays is drawn."""
    mode: var[str] = var("writes")
    """"reads" or "writes": which count colours the cells."""
    cursor: var[tuple[int, int]] = var((0, 0))
    """(row, column) of the picked cell in the drawn grid."""
    block: var[int] = var(0)
    """For shared arrays: which block's copy."""

    def reset(self) -> None:
        self.set_reactive(ThreadMap.array_index, 0)
        self.set_reactive(ThreadMap.cursor, (0, 0))
        self.set_reactive(ThreadMap.block, 0)
        self.set_reactive(ThreadMap.mode, "writes")
        self._map = None
        self._pick_mode()

    def _pick_mode(self) -> None:
        """Show writes, unless the array was only read (an input)."""
        em = self._element_map() if self.arrays() else None
        if em is None or em.writes is None:
            return
        mode = "reads" if not em.writes.any() and em.reads is not None and em.reads.any() else "writes"
        self.set_reactive(ThreadMap.mode, mode)

    def arrays(self) -> list[str]:
        """Global arrays first (as the kernel's parameters), then shared ones."""
        if self.report is None:
            return []
        out: list[str] = []
        for space in ("global", "shared", "const"):
            out += [a.name for a in self.report.arrays if a.space == space and a.name not in out]
        return out

    @property
    def array_name(self) -> str | None:
        names = self.arrays()
        return names[self.array_index % len(names)] if names else None

    def _element_map(self):
        name = self.array_name
        if name is None:
            return None
        if getattr(self, "_map", None) is None or self._map.name != name:
            self._map = breakdown.element_map(self.report, name)
        return self._map

    def _values(self, em) -> tuple[np.ndarray | None, np.ndarray | None]:
        counts = em.writes if self.mode == "writes" else em.reads
        first = em.first_writer if self.mode == "writes" else em.first_reader
        if em.space == "shared":
            b = self.block % em.shape[0]
            counts = counts[b] if counts is not None else None
            first = first[b] if first is not None else None
        return counts, first

    def draw(self):
        names = self.arrays()
        if not names:
            return not_recorded("Arrays", "The launch touched no global or shared array.")
        em = self._element_map()
        if em is None:
            return not_recorded(f"Array {self.array_name!r}")
        counts, first = self._values(em)
        if counts is None and first is None:
            return not_recorded("Per-element counts and the phase trace",
                                "The checker ran this launch without instrumentation.")
        base = counts if counts is not None else np.zeros_like(first)
        grid, index_of = as_rows(base, WRAP)
        labels, _ = as_rows(first, WRAP) if first is not None else (None, None)
        rows, cols = grid.shape
        r, c = min(self.cursor[0], rows - 1), min(self.cursor[1], cols - 1)
        launch = self.report.launch
        cell = max(3, len(str(max(launch.num_threads - 1, 0))) + 1)
        width = max(self.size.width, 40)
        row_label_w = 7
        fit_cols = max(1, (width - row_label_w - 1) // (cell + 1))
        c0, c1 = window(cols, fit_cols, c)
        r0, r1 = window(rows, MAX_ROWS, r)
        vmax = int(base.max()) if base.size else 0
        out = Text()
        heading = " · ".join(
            f"[{n}]" if n == self.array_name else n for n in names)
        out.append("arrays  ", style="dim")
        out.append(heading + "\n", style="bold")
        space = em.space + (f", block {self.block % em.shape[0]} of {em.shape[0]}" if em.space == "shared" else "")
        out.append(f"{self.array_name}", style="bold")
        out.append(f"  {space}, shape {tuple(em.shape[1:] if em.space == 'shared' else em.shape)}"
                   f"  ·  showing {self.mode}", style="dim")
        if (c0, c1) != (0, cols) or (r0, r1) != (0, rows):
            out.append(f"  ·  rows {r0}-{r1 - 1} of {rows}, columns {c0}-{c1 - 1} of {cols}", style="dim")
        out.append("\n\n")
        out.append(" " * row_label_w)
        for cc in range(c0, c1):
            out.append(f"{cc:>{cell}} ", style="dim")
        out.append("\n")
        for rr in range(r0, r1):
            label = f"[{rr * WRAP}]" if base.ndim == 1 else f"[{rr}]"
            out.append(f"{label:>{row_label_w - 1}} ", style="dim")
            for cc in range(c0, c1):
                value = int(grid[rr, cc])
                if value < 0:
                    out.append(" " * (cell + 1))
                    continue
                who = int(labels[rr, cc]) if labels is not None else -1
                text = str(who) if who >= 0 else ("?" if value else "·")
                style = heat_style(value, vmax) or "dim"
                if (rr, cc) == (r, c):
                    style = "bold black on white"
                out.append(f"{text:>{cell}}", style=style)
                out.append(" ")
            out.append("\n")
        out.append("\n")
        out.append(legend(vmax, f"{self.mode} per element"))
        out.append("   number: the first thread (global linear id) that did it", style="dim")
        return Group(out, self._details(em, index_of(r, c), counts is not None))

    def _details(self, em, index: tuple[int, ...], have_counts: bool) -> Text:
        full = (self.block % em.shape[0], *index) if em.space == "shared" else index
        where = "[" + ", ".join(str(i) for i in index) + "]"
        out = Text("\n")
        out.append(f"{self.array_name}{where}", style="bold")
        if em.space == "shared":
            out.append(f" of block {full[0]}", style="bold")
        if have_counts:
            reads = int(em.reads[full]) if em.reads is not None else 0
            writes = int(em.writes[full]) if em.writes is not None else 0
            out.append(f": read {reads}×, written {writes}×")
        readers, writers, _ = breakdown.accessors(self.report, self.array_name, tuple(int(i) for i in full))
        if readers:
            out.append("\n  read by  ", style="dim")
            out.append(", ".join(readers), style="cyan")
        if writers:
            out.append("\n  written by  ", style="dim")
            out.append(", ".join(writers), style="green")
        if not readers and not writers:
            why = "no thread touched it" if have_counts else "not in the recorded trace"
            out.append(f"\n  {why}", style="dim")
        if em.partial:
            out.append("\n  (the trace covers part of the launch: thread numbers may be missing)", style="dim")
        for fault in getattr(self.report, "faults", []) or []:
            if getattr(fault, "array", None) == self.array_name and fault.index is not None:
                index = ", ".join(str(int(i)) for i in fault.index)
                out.append(f"\n{type(fault).__name__}: ", style="bold red")
                out.append(f"block {_xyz(fault.block)} thread {_xyz(fault.thread)} used index [{index}] at "
                           f"line {fault.lineno} (not drawn: it is outside the array or not its element)")
        return out

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "block":
            em = self._element_map() if self.report is not None else None
            return em is not None and em.space == "shared"
        return True

    def action_move(self, dr: int, dc: int) -> None:
        em = self._element_map()
        if em is None:
            return
        counts, first = self._values(em)
        base = counts if counts is not None else first
        if base is None:
            return
        grid, _ = as_rows(base, WRAP)
        rows, cols = grid.shape
        r = max(0, min(rows - 1, self.cursor[0] + dr))
        c = max(0, min(cols - 1, self.cursor[1] + dc))
        if grid[r, c] < 0:      # past the end of a wrapped 1-D array
            return
        self.cursor = (r, c)

    def action_array(self, step: int) -> None:
        names = self.arrays()
        if names:
            self.array_index = (self.array_index + step) % len(names)

    def action_mode(self) -> None:
        self.mode = "reads" if self.mode == "writes" else "writes"

    def action_block(self, step: int) -> None:
        em = self._element_map()
        if em is not None and em.space == "shared":
            self.block = (self.block + step) % em.shape[0]

    def watch_array_index(self) -> None:
        self._pick_mode()
        self.cursor = (0, 0)
        self.redraw()
        self.refresh_bindings()

    def watch_mode(self) -> None:
        self.redraw()

    def watch_cursor(self) -> None:
        self.redraw()

    def watch_block(self) -> None:
        self.redraw()
