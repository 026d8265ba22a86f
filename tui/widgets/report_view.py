"""The base of the visualisers: a focusable view of one ``LaunchReport`` that never crashes on bad data."""

from __future__ import annotations

import traceback

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static


class ReportView(Static, can_focus=True):
    """Subclasses implement ``draw()``; ``show(report)`` swaps the report and redraws.

    Data a launch did not record is drawn as a plain "not recorded" sentence. An error while drawing is
    shown in place (with its first line), never raised: a broken view must not take the app down.
    """

    title = "view"
    DRAW_WIDTH = 100
    """The width drawn for when the view is not on a screen (exported, or tested)."""

    def __init__(self, **kwargs):
        super().__init__("", **kwargs)
        self.report = None
        self._stale = False
        self._drawn_width = 0
        self.debug = ""             # the traceback of the last drawing error, for bug reports

    def show(self, report) -> None:
        self.report = report
        self._memo = {}
        self.reset()
        self.redraw()

    def memo(self, key: str, compute):
        """``compute()`` once per report (replaying a large trace takes a moment; redraws are frequent)."""
        cache = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    def reset(self) -> None:
        """Forget per-report state (cursor, phase...) when the report changes."""

    def redraw(self) -> None:
        if not self.is_on_screen:
            self._stale = True          # drawn when its tab is shown: five views, one visible
            return
        self._stale = False
        self._drawn_width = self.draw_width
        if self.report is None:
            self.update(Text("No run to show yet: ctrl+r in the editor checks your file.", style="dim"))
            return
        try:
            self.update(self.draw())
        except Exception as e:  # a visualiser bug must not end the session
            first = (str(e).strip().splitlines() or [""])[0]
            self.debug = traceback.format_exc()
            self.update(Text(f"This view could not be drawn ({type(e).__name__}: {first}).", style="red"))

    def draw(self) -> RenderableType:
        raise NotImplementedError

    def on_resize(self) -> None:
        if self.report is not None:
            self.redraw()
            self.call_after_refresh(self._fit_width)   # a real terminal's resize can settle after the event

    def _fit_width(self) -> None:
        if self.report is not None and self._drawn_width != self.draw_width:
            self.redraw()

    def on_show(self) -> None:
        if self._stale:
            self.redraw()

    @property
    def draw_width(self) -> int:
        """Columns to draw for: the view's own width once laid out."""
        return max(self.size.width, 40) if self.size.width else self.DRAW_WIDTH

    @property
    def is_on_screen(self) -> bool:
        """Mounted and in a shown tab (hidden tabs are not drawn until they are opened)."""
        return self.is_mounted and all(
            getattr(node, "display", True) for node in self.ancestors_with_self)


CODE_INLINE = 100
"""From this many columns on, a per-access table has the source line in a last column; narrower, the lines
are listed under the table (a squeezed column would wrap each line of code one character wide)."""


def with_code(table: Table, rows: list[tuple[list, int, str]], width: int) -> RenderableType:
    """``table`` with its ``rows`` — (cells, line number, source line) — and the source of each line."""
    inline = width >= CODE_INLINE
    if inline:
        table.add_column("code", no_wrap=True, overflow="ellipsis")
    for cells, _, code in rows:
        table.add_row(*cells, *([Text(code, style="italic")] if inline else []))
    if inline or not rows:
        return table
    lines = Text()
    for lineno, code in dict.fromkeys((lineno, code) for _, lineno, code in rows):
        lines.append(f"\nline {lineno:>4}  ", style="dim")
        lines.append(code, style="italic")
    return Group(table, lines)


def not_recorded(what: str, why: str = "") -> Text:
    text = Text(f"{what}: not recorded for this launch.", style="bold yellow")
    if why:
        text.append(f"\n{why}", style="dim")
    return text
