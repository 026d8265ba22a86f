"""Seeing a run: six views of one launch of the last check, and a picker for the launch."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

from ..launches import default_launch, launches_of
from ..widgets.bank_view import BankView
from ..widgets.coalescing_view import CoalescingView
from ..widgets.outputs_view import OutputsView
from ..widgets.phase_view import PhaseView
from ..widgets.roofline_view import RooflineView
from ..widgets.thread_map import ThreadMap

TABS = (("threads", "1 Threads", ThreadMap), ("phases", "2 Phases", PhaseView),
        ("coalescing", "3 Coalescing", CoalescingView), ("banks", "4 Banks", BankView),
        ("roofline", "5 Roofline", RooflineView), ("outputs", "6 Outputs", OutputsView))


class VisualiseScreen(Screen):
    BINDINGS = [
        *(Binding(str(i), f"tab('{name}')", label.split(" ", 1)[1], show=False)
          for i, (name, label, _) in enumerate(TABS, 1)),
        Binding("left_square_bracket", "launch(-1)", "◀ Launch", show=False),
        Binding("right_square_bracket", "launch(1)", "Launch ▶", show=False),
        Binding("escape", "back", "Back"),
    ]

    launch_index: var[int] = var(-1)
    """Which launch of the check is shown (index into ``self.launches``)."""

    def __init__(self, puzzle, result):
        super().__init__()
        self.puzzle = puzzle
        self.result = result
        self.launches = launches_of(result)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="launch-bar")
        with TabbedContent(id="views"):
            for name, label, cls in TABS:
                with TabPane(label, id=f"tab-{name}"), VerticalScroll(classes="view-scroll"):
                    yield cls(id=name)
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.title = f"Puzzle {self.puzzle.number}: {self.puzzle.title} · the last run"
        self.query_one(RooflineView).puzzle = self.puzzle
        self.launch_index = default_launch(self.launches, self.result.next_star) if self.launches else -1
        self.query_one("#threads").focus()

    def watch_launch_index(self, index: int) -> None:
        bar = self.query_one("#launch-bar", Static)
        if not self.launches or index < 0:
            bar.update(Text("No launch ran: there is nothing to show."))
            return
        ref = self.launches[index]
        faults = getattr(ref.report, "faults", [])
        bar.update(Text(("[ ] " if len(self.launches) > 1 else "") + ref.title
                        + (f"  ·  {type(faults[0]).__name__}" if faults else ""), no_wrap=True, overflow="ellipsis"))
        bar.set_class(bool(faults) or ref.case_status == "fail", "-failed")
        case = self.result.cases[ref.case_number - 1]
        lines = list(getattr(case, "float64_lines", None) or [])
        self.query_one(RooflineView).float64_lines = lines[ref.launch_number - 1] if ref.launch_number <= len(lines) \
            else None
        for _, _, cls in TABS:
            if cls is OutputsView:
                self.query_one(OutputsView).show_case(case, ref.report)
            else:
                self.query_one(cls).show(ref.report)

    def action_launch(self, step: int) -> None:
        if self.launches:
            self.launch_index = (self.launch_index + step) % len(self.launches)

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = f"tab-{name}"
        self.query_one(f"#{name}").focus()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        name = (event.pane.id or "").removeprefix("tab-")
        widget = self.query(f"#{name}")
        if widget:
            widget.first().focus()

    @property
    def active_view(self) -> str:
        return (self.query_one(TabbedContent).active or "").removeprefix("tab-")

    def action_back(self) -> None:
        self.app.pop_screen()
