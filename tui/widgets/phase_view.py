"""Visualiser (b): one block's shared memory, barrier phase by barrier phase, with a scrubber.

A phase is the stretch of a block's life between two ``cuda.syncthreads()``. For the chosen array each cell
shows the slot's *value* as the phase ended (for shared arrays, from the trace), or the thread that wrote it
last in the phase (``v`` switches), and is coloured by what happened to it in the phase: written, read, both,
or untouched. ← → move through the phases; , and . (or the mouse-free ↑ ↓ with shift) move the slot cursor,
whose line says the value and which threads read and wrote that slot in the phase.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.binding import Binding
from textual.reactive import var

from .. import breakdown
from ..heat import as_rows, window
from .report_view import ReportView, not_recorded

WRAP = 16
MAX_ROWS = 18
STYLES = {"w": "black on #8ab17d", "r": "white on #1f6f8b", "rw": "black on #e9c46a"}
CURSOR = "bold black on white"
MAX_NAMED = 8


def fmt_value(v) -> str:
    """A slot's value, short: integers whole, floats to 4 significant digits."""
    if isinstance(v, (np.integer, int)):
        return str(int(v))
    if isinstance(v, (np.bool_, bool)):
        return "T" if v else "F"
    f = float(v)
    if np.isnan(f):
        return "nan"
    if f == int(f) and abs(f) < 1e5:
        return str(int(f))
    return f"{f:.4g}"


def threads_text(threads: list[int]) -> str:
    named = ", ".join(str(t) for t in threads[:MAX_NAMED])
    more = len(threads) - MAX_NAMED
    return named + (f" and {more} more" if more > 0 else "")


class PhaseView(ReportView):
    title = "Shared memory by phase"

    BINDINGS = [
        Binding("left,h", "phase(-1)", "◀ Phase"),
        Binding("right,l", "phase(1)", "Phase ▶"),
        Binding("home", "phase_to(0)", "First", show=False),
        Binding("end", "phase_to(-1)", "Last", show=False),
        Binding("comma,shift+left", "slot(-1)", "◀ Slot", show=False),
        Binding("full_stop,shift+right", "slot(1)", "Slot ▶", show=False),
        Binding("up,k", "slot(-1, True)", "Slot up", show=False),
        Binding("down,j", "slot(1, True)", "Slot down", show=False),
        Binding("v", "values", "Values"),
        Binding("b", "block(1)", "Next block"),
        Binding("B", "block(-1)", "Prev block", show=False),
        Binding("a", "array(1)", "Next array"),
        Binding("A", "array(-1)", "Prev array", show=False),
    ]

    phase: var[int] = var(0)
    """The barrier phase shown (0: from the start of the kernel to the first barrier)."""
    block_index: var[int] = var(0)
    """Index into the recorded blocks."""
    array_index: var[int] = var(0)
    """Index into ``breakdown.phase_arrays`` (shared arrays first)."""
    slot: var[int] = var(0)
    """The flat index of the slot under the cursor."""
    show_values: var[bool] = var(True)
    """Cells show values (where recorded) rather than the last writer."""

    def reset(self) -> None:
        for name in ("phase", "block_index", "array_index", "slot"):
            self.set_reactive(getattr(PhaseView, name), 0)

    def _blocks(self) -> list[int]:
        trace = breakdown.trace_of(self.report)
        return trace.blocks() if trace is not None else []

    @property
    def block(self) -> int | None:
        blocks = self._blocks()
        return blocks[self.block_index % len(blocks)] if blocks else None

    @property
    def phases(self) -> int:
        trace = breakdown.trace_of(self.report)
        return trace.num_phases(self.block) if trace is not None and self.block is not None else 0

    @property
    def array_name(self) -> str | None:
        arrays = breakdown.phase_arrays(self.report) if self.report is not None else []
        return arrays[self.array_index % len(arrays)] if arrays else None

    def draw(self):
        trace = breakdown.trace_of(self.report)
        if trace is None:
            return not_recorded("The barrier-phase trace", "The checker ran this launch without a trace.")
        arrays = breakdown.phase_arrays(self.report)
        block = self.block
        if block is None or not arrays:
            return not_recorded("Memory accesses", "No block accessed memory in the recorded trace.")
        name = arrays[self.array_index % len(arrays)]
        view = breakdown.phase_view(self.report, block, self.phase, name)
        if view is None:
            return not_recorded(f"Array {name!r}")
        values = breakdown.phase_values(self.report, block, view.phase, name)
        out = Text()
        bx, by, bz = self.report.launch.block_xyz(block)
        blocks = self._blocks()
        out.append("block ", style="dim")
        out.append(f"({bx}, {by}, {bz}) ", style="bold cyan")
        out.append(f" ({self.block_index % len(blocks) + 1} of {len(blocks)} recorded)   array ", style="dim")
        out.append(" · ".join(f"[{a}]" if a == name else a for a in arrays), style="bold")
        out.append("\n\n")
        out.append(self._scrubber(view))
        out.append("\n")
        start = "the kernel's start" if view.starts_after is None else f"the barrier at line {view.starts_after}"
        end = "the kernel's end" if view.ends_at is None else f"the barrier at line {view.ends_at}"
        out.append(f"phase {view.phase + 1} of {view.phases}: from {start} to {end}\n\n", style="bold")
        shared = name in {a.name for a in self.report.arrays if a.space == "shared"}
        if not shared:
            out.append("(a global array: shown for the elements this block touched)\n", style="dim")
        drawing_values = self.show_values and values is not None
        out.append(self._grid(view, values if drawing_values else None))
        out.append("\n")
        for key, what in (("w", "written"), ("r", "read"), ("rw", "written and read")):
            out.append(f" {what} ", style=STYLES[key])
            out.append(" ")
        out.append(" · untouched   ", style="dim")
        if drawing_values:
            out.append("number: the slot's value as this phase ends (·: not written yet)", style="dim")
        else:
            out.append("number: the thread (linear, in the block) that wrote it last", style="dim")
        if shared and values is None:
            out.append("\n(the values of this block were not kept: the trace keeps them for the first blocks only)",
                       style="dim")
        out.append("\n")
        out.append(self._slot_line(view, values))
        writes, reads = int(view.writes.sum()), int(view.reads.sum())
        out.append(f"\nIn this phase the block wrote {name} {writes}× and read it {reads}×.", style="")
        others = {k: v for k, v in view.other.items() if self._space(k) != "local"}
        if others:
            out.append("\nOther arrays: " + "; ".join(f"{k} {r} reads, {w} writes" for k, (r, w) in others.items()),
                       style="dim")
        if trace.truncated:
            out.append(f"\nThe trace is partial: {trace.summary()}.", style="dim")
        return out

    def _slot_line(self, view, values) -> Text:
        size = int(np.prod(view.shape))
        slot = self.slot % max(size, 1)
        index = tuple(int(i) for i in np.unravel_index(slot, view.shape))
        where = "[" + ", ".join(str(i) for i in index) + "]"
        readers, writers = breakdown.phase_slot(self.report, view.block, view.phase, view.array, slot)
        out = Text("\n")
        out.append(f"{view.array}{where}", style="bold")
        if values is not None:
            v, written = values
            out.append(" = ", style="dim")
            out.append(fmt_value(v.reshape(-1)[slot]) if written.reshape(-1)[slot] else "not written yet",
                       style="bold")
            out.append(f" after phase {view.phase + 1}", style="dim")
        for label, threads, style in (("\n  written by ", writers, "green"), ("   read by ", readers, "cyan")):
            out.append(label, style="dim")
            if threads:
                out.append("thread" + ("s " if len(threads) > 1 else " "), style="dim")
                out.append(threads_text(threads), style=style)
            else:
                out.append("no thread", style="dim")
        out.append("  (in this phase)", style="dim")
        return out

    def _space(self, name: str) -> str:
        for a in self.report.arrays:
            if a.name == name:
                return a.space
        return "?"

    def _scrubber(self, view) -> Text:
        out = Text("◀ ", style="bold")
        for k in range(view.phases):
            out.append(f" {k + 1} ", style="bold black on #e9c46a" if k == view.phase else "reverse")
            if k < view.phases - 1:
                out.append("│", style="red")
        out.append(" ▶", style="bold")
        out.append(f"   phase {view.phase + 1} of {view.phases}" if view.phases > 1 else
                   "   one phase: this block never waits at a barrier", style="dim")
        return out

    def _grid(self, view, values) -> Text:
        writes, _ = as_rows(view.writes, WRAP)
        reads, _ = as_rows(view.reads, WRAP)
        writer, _ = as_rows(view.writer, WRAP)
        rows, cols = writes.shape
        if values is not None:
            v, written = values
            texts = [fmt_value(x) if w else "" for x, w in zip(v.reshape(-1), written.reshape(-1))]
            cell = max(3, min(8, max((len(t) for t in texts), default=1) + 1))
            texts_grid = np.full(rows * cols, "", dtype=object)
            texts_grid[:len(texts)] = texts
            texts_grid = texts_grid.reshape(rows, cols)
        else:
            cell = max(3, len(str(self.report.launch.threads_per_block)) + 1)
            texts_grid = None
        size = int(np.prod(view.shape))
        sr, sc = divmod(self.slot % max(size, 1), cols)      # as_rows lays every array out in rows of ``cols``
        width = self.draw_width
        c0, c1 = window(cols, max(1, (width - 8) // (cell + 1)), sc)
        r0, r1 = window(rows, MAX_ROWS, sr)
        out = Text()
        out.append(" " * 7)
        for c in range(c0, c1):
            out.append(f"{c:>{cell}} ", style="dim")
        out.append("\n")
        for r in range(r0, r1):
            label = f"[{r * cols}]" if view.writes.ndim == 1 else f"[{r}]"
            out.append(f"{label:>6} ", style="dim")
            for c in range(c0, c1):
                w, rd = int(writes[r, c]), int(reads[r, c])
                if w < 0:
                    out.append(" " * (cell + 1))
                    continue
                key = "rw" if w and rd else "w" if w else "r" if rd else ""
                if texts_grid is not None:
                    text = texts_grid[r, c] or "·"
                else:
                    text = str(int(writer[r, c])) if w else ("r" if rd else "·")
                style = CURSOR if (r, c) == (sr, sc) else STYLES.get(key, "dim")
                out.append(f"{text:>{cell}}", style=style)
                out.append(" ")
            out.append("\n")
        if (r1 - r0, c1 - c0) != (rows, cols):
            out.append(f"(showing rows {r0}-{r1 - 1} of {rows}, columns {c0}-{c1 - 1} of {cols})\n", style="dim")
        return out

    def action_phase(self, step: int) -> None:
        if self.phases:
            self.phase = max(0, min(self.phases - 1, self.phase + step))

    def action_phase_to(self, where: int) -> None:
        if self.phases:
            self.phase = where % self.phases

    def action_slot(self, step: int, by_row: bool = False) -> None:
        """Move the slot cursor ``step`` slots (or rows of the drawing)."""
        view = breakdown.phase_view(self.report, self.block, self.phase, self.array_name) \
            if self.report is not None and self.block is not None and self.array_name else None
        if view is not None:
            size = int(np.prod(view.shape))
            cols = as_rows(view.writes, WRAP)[0].shape[1]
            self.slot = max(0, min(size - 1, self.slot + step * (cols if by_row else 1)))

    def action_values(self) -> None:
        self.show_values = not self.show_values

    def action_block(self, step: int) -> None:
        blocks = self._blocks()
        if blocks:
            self.block_index = (self.block_index + step) % len(blocks)
            self.phase = min(self.phase, max(self.phases - 1, 0))

    def action_array(self, step: int) -> None:
        arrays = breakdown.phase_arrays(self.report) if self.report is not None else []
        if arrays:
            self.array_index = (self.array_index + step) % len(arrays)
            self.slot = 0

    def watch_phase(self) -> None:
        self.redraw()

    def watch_block_index(self) -> None:
        self.redraw()

    def watch_array_index(self) -> None:
        self.redraw()

    def watch_slot(self) -> None:
        self.redraw()

    def watch_show_values(self) -> None:
        self.redraw()
