"""The workspace: the player's file in an editor beside the puzzle's page and the last check's verdict."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

from puzzles import workspace

from ..messages import HintRevealed
from ..widgets.editor import SolutionEditor
from ..widgets.puzzle_page import PuzzlePage
from ..widgets.results import ResultsView, fault_line
from .confirm import Confirm


class WorkspaceScreen(Screen):
    """Edit, save (ctrl+s), run (ctrl+r) and look at the run (ctrl+g); see the reference (f3) or start over (f4)."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+r", "run", "Run", priority=True),
        Binding("ctrl+g", "visualise", "See the run", priority=True),
        Binding("ctrl+f", "next_fault", "Go to fault"),
        Binding("ctrl+o", "external_editor", "$EDITOR"),
        Binding("f2", "hint", "Hint"),
        Binding("f3", "solution", "Solution"),
        Binding("f4", "reset", "Reset"),
        Binding("escape", "back", "Back (saves)", priority=True),
        Binding("e,i", "edit", "Edit", show=False),
    ]

    running: var[bool] = var(False)
    """A check of this puzzle is running in the background."""
    dirty: var[bool] = var(False)
    """The editor holds unsaved changes (mirrors the editor)."""

    def __init__(self, puzzle, path: Path):
        super().__init__()
        self.puzzle = puzzle
        self.path = Path(path)
        self.result = None
        self._fault_cursor = -1

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="work"):
            yield SolutionEditor(self.path, id="editor")
            with Vertical(id="side"):
                yield Static("", id="run-status")
                with TabbedContent(id="side-tabs", initial="task-tab"):
                    with TabPane("Task", id="task-tab"), VerticalScroll(id="task-scroll"):
                        yield PuzzlePage(id="task")
                    with TabPane("Results", id="results-tab"), VerticalScroll(id="results-scroll"):
                        yield ResultsView(id="results")
        yield Footer()

    @property
    def editor(self) -> SolutionEditor:
        return self.query_one(SolutionEditor)

    @property
    def results(self) -> ResultsView:
        return self.query_one(ResultsView)

    def on_mount(self) -> None:
        self.title = f"Puzzle {self.puzzle.number}: {self.puzzle.title}"
        self.watch(self.editor, "dirty", self._editor_dirty)
        self._show_page()
        self._subtitle()
        self.editor.focus()
        last = self.app.results.get(self.puzzle.slug)
        if last is not None:
            self.show_result(last, highlight=False)
        if self.app.checking == self.puzzle.slug:
            self.running = True

    def _show_page(self) -> None:
        got, most = self.app.stars_of(self.puzzle.slug)
        self.query_one(PuzzlePage).show(self.puzzle, got, most, self.app.hints_of(self.puzzle), self.path.name,
                                        self.app.solution_seen(self.puzzle.slug))

    def _editor_dirty(self, dirty: bool) -> None:
        self.dirty = dirty

    def watch_dirty(self) -> None:
        self._subtitle()

    def watch_running(self, running: bool) -> None:
        self.set_class(running, "-running")
        self.query_one("#run-status", Static).update(
            "⏳ running the test cases…" if running else "")
        if running:
            self.results.show_running()
            self.query_one(TabbedContent).active = "results-tab"

    def _subtitle(self) -> None:
        got, most = self.app.stars_of(self.puzzle.slug)
        self.sub_title = (f"{self.path.name}{' ● unsaved' if self.dirty else ''} · "
                          f"{'★' * got}{'☆' * max(most - got, 0)}")

    def on_screen_resume(self) -> None:
        # back from $EDITOR or another screen: pick up outside edits when there is nothing to lose
        editor = self.editor
        if not editor.dirty and editor.changed_on_disk():
            editor.load()
            self.notify(f"{self.path.name} changed on disk; reloaded it.")

    # saving --------------------------------------------------------------------------------------------------

    def save(self, quiet: bool = False) -> bool:
        """Save the editor's text; False (with a message) if it could not be written."""
        try:
            kept = self.editor.save()
        except OSError as e:
            self.notify(f"Could not save {self.path.name}: {e.strerror or e}", severity="error", timeout=10)
            return False
        if kept is not None:
            self.notify(f"{self.path.name} was changed outside the editor; that version is kept as {kept.name}.",
                        severity="warning", timeout=10)
        if not quiet:
            self.notify(f"Saved {self.path.name}.")
        self._subtitle()
        return True

    def action_save(self) -> None:
        self.save()

    def action_back(self) -> None:
        if self.editor.dirty and not self.save(quiet=True):
            return
        self.app.pop_screen()

    def action_edit(self) -> None:
        self.editor.focus()

    # running -------------------------------------------------------------------------------------------------

    def action_run(self) -> None:
        if self.running:
            self.notify("A check is already running.")
            return
        if self.editor.dirty and not self.save(quiet=True):
            return
        self.running = True
        self.app.start_check(self.puzzle, self.path)

    def show_result(self, result, highlight: bool = True) -> None:
        """Show a finished check (called by the app when the worker is done)."""
        self.running = False
        self.result = result
        self._fault_cursor = -1
        self.results.result = result
        self.query_one(TabbedContent).active = "results-tab"
        self.query_one("#results-scroll").scroll_home(animate=False)
        self._show_page()
        self._subtitle()
        if highlight and not result.passed:
            self.action_next_fault(quiet=True)

    def _fault_lines(self) -> list[int]:
        if self.result is None:
            return []
        lines: list[int] = []
        for failure in self.result.failures:
            where = fault_line(failure)
            if where is None or not where[0] or Path(where[0]).resolve() != self.path.resolve():
                continue
            if where[1] not in lines:
                lines.append(where[1])
        return lines

    def action_next_fault(self, quiet: bool = False) -> None:
        lines = self._fault_lines()
        if not lines:
            if not quiet:
                self.notify("The last check found no fault in a line of your file.")
            return
        self._fault_cursor = (self._fault_cursor + 1) % len(lines)
        self.editor.highlight_line(lines[self._fault_cursor])
        self.editor.focus()

    def action_visualise(self) -> None:
        if self.result is None or not any(c.reports for c in self.result.cases):
            self.notify("Nothing to show yet: run your file with ctrl+r first (a file that does not compile "
                        "has no run to show).")
            return
        from .visualise import VisualiseScreen

        self.app.push_screen(VisualiseScreen(self.puzzle, self.result))

    # the rest ------------------------------------------------------------------------------------------------

    def action_hint(self) -> None:
        self.app.reveal_hint(self.puzzle, self)
        self.query_one(TabbedContent).active = "task-tab"
        self.query_one("#task-scroll").scroll_end(animate=False)

    def on_hint_revealed(self, message: HintRevealed) -> None:
        self._show_page()

    def action_solution(self) -> None:
        """Show the reference solution; the first time, ask first (seeing it is noted in the progress)."""
        if self.app.solution_seen(self.puzzle.slug):
            self._show_solution()
            return

        def decide(yes: bool | None) -> None:
            if yes:
                self._show_solution()

        self.app.push_screen(Confirm(f"Show the reference solution of puzzle {self.puzzle.number}?",
                                     "Your progress will note that you have seen it. Your file is not changed.",
                                     "Show it"), decide)

    def _show_solution(self) -> None:
        from .solution import SolutionScreen

        text = self.app.reveal_solution(self.puzzle)
        if text is None:
            return
        self._show_page()
        self.app.push_screen(SolutionScreen(self.puzzle, text))

    def action_reset(self) -> None:
        """Start over from the starter, after asking; the current text is kept beside the file."""
        if self.running:
            self.notify("A check of this file is running; reset it when the check is done.")
            return

        def decide(yes: bool | None) -> None:
            if yes:
                self.reset_to_starter()

        self.app.push_screen(Confirm(f"Reset {self.path.name} to the puzzle's starter?",
                                     f"Your current text is kept beside it as {self.path.name}.bak-<time>.",
                                     "Reset"), decide)

    def reset_to_starter(self) -> Path | None:
        """Replace the file with the starter; returns the backup of the old text (None if nothing to keep)."""
        if self.path.resolve() != workspace.workspace_path(self.puzzle).resolve():
            self.notify(f"{self.path.name} is not this puzzle's workspace file; it is left as it is.",
                        severity="error")
            return None
        # unsaved text goes to disk first, so the backup holds exactly what the player sees
        if (self.editor.dirty or not self.path.exists()) and not self.save(quiet=True):
            return None
        try:
            _, backup = workspace.reset_to_starter(self.puzzle)
        except workspace.WorkspaceError as e:
            self.notify(str(e), title="Cannot reset", severity="error", timeout=15)
            return None
        self.editor.load()
        self.editor.focus()
        self._subtitle()
        self.notify(f"{self.path.name} is the starter again"
                    + (f"; your text is kept as {backup.name}." if backup is not None else "."))
        return backup

    def action_external_editor(self) -> None:
        command = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not command:
            self.notify("Set $EDITOR (for example `export EDITOR=vim`) to edit in your own editor.")
            return
        if self.editor.dirty and not self.save(quiet=True):
            return
        try:
            with self.app.suspend():
                subprocess.call([*shlex.split(command), str(self.path)])
        except Exception as e:  # SuspendNotSupported in a test or a web terminal, or the editor is missing
            self.notify(f"Could not start {command!r}: {e}", severity="error")
            return
        self.editor.load()
        self.refresh()
