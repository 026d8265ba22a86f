"""Visualiser (b): one block's shared memory, barrier phase by barrier phase, with a scrubber.

A phase is the stretch of a block's life between two ``cuda.syncthreads()``. For the chosen array each cell
shows which thread wrote it in this phase (the last writer) and is coloured by what happened to it: written,
read, both, or untouched. Left and right move through the phases.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.reactive import var

from .. import breakdown
from ..heat import as_rows, window
from .report_view import ReportView, not_recorded

WRAP = 16
MAX_ROWS = 18
STYLES = {"w": "black on #8ab17d", "r": "white on #1f6f8b", "rw": "black on #e9c46a"}


class PhaseView(ReportView):
    title = "Shared memory by phase"

    BINDINGS = [
        Binding("left,h", "phase(-1)", "◀ Phase"),
        Binding("right,l", "phase(1)", "Phase ▶"),
        Binding("home", "phase_to(0)", "First", show=False),
        Binding("end", "phase_to(-1)", "Last", show=False),
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

    def reset(self) -> None:
        for name in ("phase", "block_index", "array_index"):
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
        out = Text()
        launch = self.report.launch
        bx, by, bz = launch.block_xyz(block)
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
        out.append(f"phase {view.phase}: from {start} to {end}\n\n", style="bold")
        if name not in {a.name for a in self.report.arrays if a.space == "shared"}:
            out.append("(a global array: shown for the elements this block touched)\n", style="dim")
        out.append(self._grid(view))
        out.append("\n")
        for key, what in (("w", "written"), ("r", "read"), ("rw", "written and read")):
            out.append(f" {what} ", style=STYLES[key])
            out.append(" ")
        out.append(" · untouched    number: the thread (linear, in the block) that wrote it last\n", style="dim")
        writes, reads = int(view.writes.sum()), int(view.reads.sum())
        out.append(f"\nIn this phase the block wrote {name} {writes}× and read it {reads}×.", style="")
        others = {k: v for k, v in view.other.items() if self._space(k) != "local"}
        if others:
            out.append("\nOther arrays: " + "; ".join(f"{k} {r} reads, {w} writes" for k, (r, w) in others.items()),
                       style="dim")
        if trace.truncated:
            out.append(f"\nThe trace is partial: {trace.summary()}.", style="dim")
        return out

    def _space(self, name: str) -> str:
        for a in self.report.arrays:
            if a.name == name:
                return a.space
        return "?"

    def _scrubber(self, view) -> Text:
        out = Text("◀ ", style="bold")
        for k in range(view.phases):
            out.append(f" {k} ", style="bold black on #e9c46a" if k == view.phase else "on #333333")
            if k < view.phases - 1:
                out.append("│", style="red")
        out.append(" ▶", style="bold")
        out.append(f"   phase {view.phase} of {view.phases - 1}" if view.phases > 1 else
                   "   one phase: this block never waits at a barrier", style="dim")
        return out

    def _grid(self, view) -> Text:
        writes, _ = as_rows(view.writes, WRAP)
        reads, _ = as_rows(view.reads, WRAP)
        writer, _ = as_rows(view.writer, WRAP)
        rows, cols = writes.shape
        cell = max(3, len(str(self.report.launch.threads_per_block)) + 1)
        width = max(self.size.width, 40)
        c0, c1 = window(cols, max(1, (width - 8) // (cell + 1)), 0)
        r0, r1 = window(rows, MAX_ROWS, 0)
        out = Text()
        out.append(" " * 7)
        for c in range(c0, c1):
            out.append(f"{c:>{cell}} ", style="dim")
        out.append("\n")
        for r in range(r0, r1):
            label = f"[{r * WRAP}]" if view.writes.ndim == 1 else f"[{r}]"
            out.append(f"{label:>6} ", style="dim")
            for c in range(c0, c1):
                w, rd = int(writes[r, c]), int(reads[r, c])
                if w < 0:
                    out.append(" " * (cell + 1))
                    continue
                key = "rw" if w and rd else "w" if w else "r" if rd else ""
                text = str(int(writer[r, c])) if w else ("r" if rd else "·")
                out.append(f"{text:>{cell}}", style=STYLES.get(key, "dim"))
                out.append(" ")
            out.append("\n")
        if (r1 - r0, c1 - c0) != (rows, cols):
            out.append(f"(showing {r1 - r0} of {rows} rows, {c1 - c0} of {cols} columns)\n", style="dim")
        return out

    def action_phase(self, step: int) -> None:
        if self.phases:
            self.phase = max(0, min(self.phases - 1, self.phase + step))

    def action_phase_to(self, where: int) -> None:
        if self.phases:
            self.phase = where % self.phases

    def action_block(self, step: int) -> None:
        blocks = self._blocks()
        if blocks:
            self.block_index = (self.block_index + step) % len(blocks)
            self.phase = min(self.phase, max(self.phases - 1, 0))

    def action_array(self, step: int) -> None:
        arrays = breakdown.phase_arrays(self.report) if self.report is not None else []
        if arrays:
            self.array_index = (self.array_index + step) % len(arrays)

    def watch_phase(self) -> None:
        self.redraw()

    def watch_block_index(self) -> None:
        self.redraw()

    def watch_array_index(self) -> None:
        self.redraw()
