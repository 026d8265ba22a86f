"""Visualiser (a): threads → elements of one array, as a grid of cells.

Each cell is one element; its number is the first thread (global linear id) that wrote it (or read it, in
the reads mode), from the recorded trace. Its colour is how many lane-accesses wrote (or read) it in the
whole launch, or, in the blocks mode, which block that thread is in. Wherever neighbouring cells belong to
different blocks a bar marks the boundary. A fault's element is marked: a race on the raced cell, an
out-of-bounds index as ✗ past the array's edge. The cursor picks an element; the lines under the grid name
the threads that touched it.
"""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.text import Text
from textual.binding import Binding
from textual.reactive import var

from .. import breakdown
from ..heat import as_rows, heat_style, legend, window
from ..marks import drawing_cell, fault_marks
from .report_view import ReportView, not_recorded

MAX_ROWS = 20
WRAP = 16
MODES = ("writes", "reads", "blocks")
BLOCK_COLOURS = ("#2a6f97", "#8a5a9e", "#2a9d8f", "#b5651d", "#5a7d2a", "#9e3a5a")
FAULT_STYLE = "bold white on #d62828"
OUTSIDE_STYLE = "dim"


def block_style(block: int) -> str:
    return f"white on {BLOCK_COLOURS[block % len(BLOCK_COLOURS)]}"


class ThreadMap(ReportView):
    title = "Threads → elements"

    BINDINGS = [
        Binding("up,k", "move(-1, 0)", "Up", show=False),
        Binding("down,j", "move(1, 0)", "Down", show=False),
        Binding("left,h", "move(0, -1)", "Left", show=False),
        Binding("right,l", "move(0, 1)", "Right", show=False),
        Binding("a", "array(1)", "Next array"),
        Binding("A", "array(-1)", "Prev array", show=False),
        Binding("m", "mode", "Colour"),
        Binding("b", "block(1)", "Next block"),
        Binding("B", "block(-1)", "Prev block", show=False),
    ]

    array_index: var[int] = var(0)
    """Which of the launch's arrays is drawn."""
    mode: var[str] = var("writes")
    """"writes", "reads" or "blocks": what colours the cells."""
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
        self._go_to_fault() or self._pick_mode()

    def _go_to_fault(self) -> bool:
        """Start on the first fault that names an array: its array, its block and its cell."""
        names = self.arrays()
        for fault in getattr(self.report, "faults", None) or []:
            if getattr(fault, "array", None) in names and fault.index is not None:
                self.set_reactive(ThreadMap.array_index, names.index(fault.array))
                self._map = None
                em = self._element_map()
                if em is None:
                    return False
                if em.space == "shared" and fault.block is not None:
                    gx, gy, _ = self.report.launch.grid
                    bx, by, bz = (int(v) for v in fault.block)
                    self.set_reactive(ThreadMap.block, bx + by * gx + bz * gx * gy)
                self._pick_mode()
                shape = tuple(em.shape[1:] if em.space == "shared" else em.shape)
                if len(fault.index) == len(shape):      # the element, or the nearest one inside the array
                    inside = tuple(max(0, min(int(i), n - 1)) for i, n in zip(fault.index, shape))
                    cell = drawing_cell(inside, shape, WRAP)
                    if cell is not None:
                        self.set_reactive(ThreadMap.cursor, cell)
                return True
        return False

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
        writes = self.mode != "reads"
        counts = em.writes if writes else em.reads
        first = em.first_writer if writes else em.first_reader
        if self.mode == "blocks" and first is not None and em.first_reader is not None:
            first = np.where(first >= 0, first, em.first_reader)       # an input: by its first reader
            counts = None if counts is None else np.maximum(em.writes, em.reads)
        if em.space == "shared":
            b = self.block % em.shape[0]
            counts = counts[b] if counts is not None else None
            first = first[b] if first is not None else None
        return counts, first

    def _marks(self, em):
        shape = tuple(em.shape[1:] if em.space == "shared" else em.shape)
        block = self.report.launch.block_xyz(self.block % em.shape[0]) if em.space == "shared" else None
        return shape, fault_marks(self.report, self.array_name, shape, block)

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
        shape, marks = self._marks(em)
        marked: dict[tuple[int, int], str] = {}
        for mark in marks:
            cell = drawing_cell(mark.index, shape, WRAP)
            if cell is not None:
                marked[cell] = "in" if mark.inside else "out"
        # cells past the array's edge that a fault points at (within two rows or columns) widen the drawing
        rows, cols = grid.shape
        out_cells = [c for c, where in marked.items() if where == "out" and c[0] < rows + 2 and c[1] < cols + 2]
        draw_rows = max([rows] + [r + 1 for r, _ in out_cells])
        draw_cols = max([cols] + [c + 1 for _, c in out_cells])
        r, c = min(self.cursor[0], rows - 1), min(self.cursor[1], cols - 1)
        launch = self.report.launch
        tpb = launch.threads_per_block
        cell = max(3, len(str(max(launch.num_threads - 1, 0))) + 1)
        width = self.draw_width
        row_label_w = 7
        fit_cols = max(1, (width - row_label_w - 1) // (cell + 1))
        c0, c1 = window(draw_cols, fit_cols, c)
        r0, r1 = window(draw_rows, MAX_ROWS, r)
        vmax = int(base.max()) if base.size else 0
        out = Text()
        out.append("arrays  ", style="dim")
        out.append(" · ".join(f"[{n}]" if n == self.array_name else n for n in names) + "\n", style="bold")
        space = em.space + (f", block {self.block % em.shape[0]} of {em.shape[0]}" if em.space == "shared" else "")
        out.append(f"{self.array_name}", style="bold")
        out.append(f"  {space}, shape {shape}  ·  showing {self.mode}", style="dim")
        if (c0, c1) != (0, draw_cols) or (r0, r1) != (0, draw_rows):
            out.append(f"  ·  rows {r0}-{r1 - 1} of {draw_rows}, columns {c0}-{c1 - 1} of {draw_cols}", style="dim")
        out.append("\n\n")
        out.append(" " * row_label_w)
        for cc in range(c0, c1):
            out.append(f"{cc:>{cell}} ", style="dim")
        out.append("\n")
        for rr in range(r0, r1):
            label = f"[{rr * cols}]" if base.ndim == 1 else f"[{rr}]"
            out.append(f"{label:>{row_label_w - 1}} ", style="dim")
            for cc in range(c0, c1):
                value = int(grid[rr, cc]) if rr < rows and cc < cols else -1
                if value < 0:
                    if marked.get((rr, cc)) == "out":
                        out.append(f"{'✗':>{cell}}", style=FAULT_STYLE)
                    else:      # past the array's edge: shaded when a fault points out there
                        out.append(f"{'░' if out_cells else ' ':>{cell}}", style=OUTSIDE_STYLE)
                    out.append(" ")
                    continue
                who = int(labels[rr, cc]) if labels is not None else -1
                if self.mode == "blocks":
                    text = str(who % tpb) if who >= 0 else "·"
                    style = block_style(who // tpb) if who >= 0 else "dim"
                else:
                    text = str(who) if who >= 0 else ("?" if value else "·")
                    style = heat_style(value, vmax) or "dim"
                if marked.get((rr, cc)) == "in":
                    style = FAULT_STYLE
                    text = f"!{text}" if len(text) < cell else text
                if (rr, cc) == (r, c):
                    style = "bold #d62828 on white" if marked.get((rr, cc)) == "in" else "bold black on white"
                out.append(f"{text:>{cell}}", style=style)
                out.append(*self._gap(labels, rr, cc, rows, cols, tpb))
            out.append("\n")
        out.append("\n")
        if self.mode == "blocks":
            out.append("colour: the block of the first thread that wrote (or read) the element · number: that "
                       "thread's index in its block", style="dim")
        else:
            out.append(legend(vmax, f"{self.mode} per element"))
            out.append("   number: the first thread (global linear id) that did it", style="dim")
        out.append("\n▕ a block boundary", style="dim")
        for mark, what in (("!", "a fault's element"), ("✗", "an index outside the array")):
            if any(m.inside == (mark == "!") for m in marks):
                out.append("   ")
                out.append(f" {mark} ", style=FAULT_STYLE)
                out.append(f" {what}", style="dim")
        return Group(out, self._details(em, index_of(r, c), counts is not None, marks))

    @staticmethod
    def _gap(labels, rr: int, cc: int, rows: int, cols: int, tpb: int) -> tuple[str, str]:
        """The character after a cell: a bar where the next cell's first thread is in another block."""
        if labels is None or cc + 1 >= cols or rr >= rows:
            return " ", ""
        a, b = int(labels[rr, cc]), int(labels[rr, cc + 1])
        if a >= 0 and b >= 0 and a // tpb != b // tpb:
            return "▕", "bold magenta"
        return " ", ""

    def _details(self, em, index: tuple[int, ...], have_counts: bool, marks) -> Text:
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
        who = breakdown.accessors(self.report, self.array_name, tuple(int(i) for i in full))
        for label, names, total, style in (("read by", who.readers, who.reader_count, "cyan"),
                                           ("written by", who.writers, who.writer_count, "green")):
            if names:
                out.append(f"\n  {label}  ", style="dim")
                out.append(", ".join(names), style=style)
                if total > len(names):
                    out.append(f" and {total - len(names)} more thread{'s' if total - len(names) > 1 else ''}",
                               style="dim")
        if not who.readers and not who.writers:
            why = "no thread touched it" if have_counts else "not in the recorded trace"
            out.append(f"\n  {why}", style="dim")
        if em.partial:
            out.append("\n  (the trace covers part of the launch: thread numbers may be missing)", style="dim")
        for mark in marks:
            out.append(f"\n{mark.kind}", style="bold red")
            out.append(mark.text.removeprefix(mark.kind))
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
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]

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
