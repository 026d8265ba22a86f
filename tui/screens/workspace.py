"""The workspace: the player's file in an editor beside the puzzle's page, the last check's verdict and what
the kernels printed.

Wide terminals show the editor and the side pane together; narrow ones (fewer than ``WIDE`` columns) show one
at a time, and the pane keys switch: f5 the editor, f6 the task, f7 the results, f8 the console. Every
printable key reaches the editor, whichever pane is in front, so nothing typed is lost. The editor's text is
autosaved (atomically, ``AUTOSAVE_DELAY`` seconds after the last change) and the file is watched: an outside
change is loaded when the editor has nothing unsaved, and offered when it has. Between a change and its
save, the text is also in a journal beside the file (written at every change, without the fsyncs, so it
costs no typing speed); if the app dies before the save, the puzzle reopens with the journal's text.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

from puzzles import workspace

from .. import files
from ..checking import same_file
from ..messages import HintRevealed
from ..widgets.console_view import ConsoleView
from ..widgets.editor import SolutionEditor
from ..widgets.puzzle_page import PageScroll, PuzzlePage
from ..widgets.results import ResultsView, fault_line
from ..widgets.triton_view import TritonView, triton_tab
from .confirm import Confirm

WIDE = 110
"""From this many columns on, the editor and the side pane are shown side by side."""
AUTOSAVE_DELAY = 0.6
"""Seconds after the last change before the editor's text is written to the file."""
AUTOSAVE_MAX = 2.0
"""While typing goes on, the text is written at least this often (seconds)."""
DISK_POLL = 1.0
"""Seconds between looks at the file for changes made outside the app."""
SIDE_TABS = (("task", "Task"), ("results", "Results"), ("console", "Console"), ("triton", "Triton"))
"""The side pane's tabs, in order: (name, label). A new view of the puzzle is one more entry here."""


class WorkspaceScreen(Screen):
    """Edit, run (ctrl+r) and look at the run (ctrl+g); see the reference (f3) or start over (f4)."""

    BINDINGS = [
        Binding("ctrl+r", "run", "Run", priority=True),
        Binding("ctrl+l", "run_same_seed", "Same cases", priority=True, show=False),
        Binding("ctrl+g", "visualise", "See run", priority=True),
        Binding("f2", "hint", "Hint", priority=True),
        Binding("f5", "pane('editor')", "Code", priority=True),
        Binding("f6", "pane('task')", "Task", priority=True),
        Binding("f7", "pane('results')", "Results", priority=True),
        Binding("f8", "pane('console')", "Console", priority=True),
        Binding("ctrl+t", "triton", "Triton", priority=True, show=False),
        Binding("escape", "back", "Back", priority=True),
        Binding("ctrl+c", "cancel_check", "Stop the check", priority=True, show=False),
        Binding("ctrl+s", "save", "Save", priority=True, show=False),
        Binding("ctrl+f", "next_fault", "Go to fault", show=False),
        Binding("ctrl+o", "external_editor", "$EDITOR", show=False),
        Binding("ctrl+n", "next_puzzle", "Next puzzle", priority=True, show=False),
        Binding("f3", "solution", "Solution", show=False),
        Binding("f4", "reset", "Reset", show=False),
    ]

    running: var[bool] = var(False)
    """A check of this puzzle is running in the background."""
    dirty: var[bool] = var(False)
    """The editor holds unsaved changes (mirrors the editor)."""
    narrow: var[bool] = var(False)
    """Fewer than ``WIDE`` columns: one pane at a time."""
    pane: var[str] = var("editor")
    """What a narrow screen shows: "editor" or "side"."""

    def __init__(self, puzzle, path: Path):
        super().__init__()
        self.puzzle = puzzle
        self.path = Path(path)
        self.result = None
        self._fault_cursor = -1
        self._autosave_timer = None
        self._unsaved_since = 0.0
        self._offering_reload = False
        self._declined: float | None = None
        self._cursor: tuple[int, int] | None = None
        self.cursor_placed = False                # the opening cursor is in place (the player's keys go there)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="work"):
            yield SolutionEditor(self.path, id="editor")
            with Vertical(id="side"):
                yield Static("", id="run-status", markup=False)
                with TabbedContent(id="side-tabs", initial="task-tab"):
                    for name, label in SIDE_TABS:
                        with TabPane(label, id=f"{name}-tab"):
                            yield from self._tab(name)
        yield Footer(compact=True, show_command_palette=False)

    def _tab(self, name: str) -> ComposeResult:
        if name == "task":
            with PageScroll(id="task-scroll", classes="side-scroll"):
                yield PuzzlePage(id="task")
        elif name == "results":
            with VerticalScroll(id="results-scroll", classes="side-scroll"):
                yield ResultsView(id="results")
        elif name == "console":
            with VerticalScroll(id="console-scroll", classes="side-scroll"):
                yield ConsoleView(id="console")
        elif name == "triton":
            yield from triton_tab()

    @property
    def editor(self) -> SolutionEditor:
        return self.query_one(SolutionEditor)

    @property
    def results(self) -> ResultsView:
        return self.query_one(ResultsView)

    @property
    def side_tab(self) -> str:
        """The side pane's tab in front: "task", "results" or "console"."""
        return (self.query_one(TabbedContent).active or "").removesuffix("-tab")

    def on_mount(self) -> None:
        self.app.runner.warm_up()                 # the first check then finds the judge ready
        self.narrow = self.app.size.width < WIDE
        self.title = f"Puzzle {self.puzzle.number}: {self.puzzle.title}"
        self.watch(self.editor, "dirty", self._editor_dirty)
        if self._recover_journal():
            self.cursor_placed = True
        else:
            self.call_after_refresh(self._place_cursor)       # once the editor has its size (else it scrolls)
        self.watch(self.editor, "selection", self._cursor_moved)
        self._show_page()
        self._subtitle()
        self.editor.focus()
        last = self.app.results.get(self.puzzle.slug)
        if last is not None:
            self.show_result(last, highlight=False, reveal=False)
        if self.app.checking == self.puzzle.slug:
            self.running = True
        self.set_interval(DISK_POLL, self._watch_disk)
        if self.narrow and last is None and not self.app.progress.puzzles.get(self.puzzle.slug):
            self.show_side("task")                # a new puzzle on a small screen: read it first

    def _show_page(self) -> None:
        got, most = self.app.stars_of(self.puzzle.slug)
        self.query_one(PuzzlePage).show(self.puzzle, got, most, self.app.hints_of(self.puzzle), self.path.name,
                                        self.app.solution_seen(self.puzzle.slug), hint_key="f2")

    def _editor_dirty(self, dirty: bool) -> None:
        self.dirty = dirty

    def watch_dirty(self) -> None:
        self._subtitle()

    def watch_running(self, running: bool) -> None:
        self.set_class(running, "-running")
        self.query_one("#run-status", Static).update(
            "⏳ running the test cases…  (esc or ctrl+c stops the check)" if running else "")
        if running:
            self.results.show_running()
            self.show_side("results", focus=False)

    def _subtitle(self) -> None:
        got, most = self.app.stars_of(self.puzzle.slug)       # the header is cut at its end: stars first
        self.sub_title = (f"{'★' * got}{'☆' * max(most - got, 0)}{' ● unsaved' if self.dirty else ''} · "
                          f"{self.path.name}")

    # the layout ---------------------------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self.narrow = self.size.width < WIDE

    def watch_narrow(self, narrow: bool) -> None:
        self.set_class(narrow, "-narrow")
        self._layout()

    def watch_pane(self) -> None:
        self._layout()

    def _layout(self) -> None:
        self.set_class(self.pane == "editor", "-show-editor")
        self.set_class(self.pane == "side", "-show-side")

    def show_side(self, tab: str, focus: bool = True) -> None:
        """Bring the side pane's ``tab`` to the front (on a narrow screen, the side pane itself)."""
        self.query_one(TabbedContent).active = f"{tab}-tab"
        if self.narrow:
            self.pane = "side"
        if focus or self.narrow:
            scroll = self.query(f"#{tab}-scroll")
            if scroll:
                self.call_after_refresh(scroll.first().focus)

    def action_pane(self, name: str) -> None:
        if name == "editor":
            self.pane = "editor"
            self.editor.focus()
        else:
            self.show_side(name)

    def on_key(self, event: events.Key) -> None:
        """A printable key that no pane wanted is typed into the editor (it comes to the front)."""
        editor = self.editor
        if event.is_printable and event.character and self.app.focused is not editor and not editor.read_only:
            event.stop()
            event.prevent_default()
            self.action_pane("editor")
            start, end = editor.selection
            editor.replace(event.character, start, end, maintain_selection_offset=False)

    # saving and the file on disk ----------------------------------------------------------------------------

    def save(self, quiet: bool = False) -> bool:
        """Save the editor's text; False (with a message) if it could not be written."""
        if self._autosave_timer is not None:
            self._autosave_timer.stop()
            self._autosave_timer = None
        try:
            kept = self.editor.save()
        except OSError as e:
            self.notify(f"Could not save {self.path.name}: {e.strerror or e}", severity="error", timeout=10)
            return False
        self._forget_journal()
        if kept is not None:
            self.notify(f"{self.path.name} was changed outside the editor; that version is kept as {kept.name}.",
                        severity="warning", timeout=10)
        if not quiet:
            self.notify(f"Saved {self.path.name}.")
        self._subtitle()
        return True

    def on_text_area_changed(self, event) -> None:
        """Debounced autosave: ``AUTOSAVE_DELAY`` after the last change, and never later than ``AUTOSAVE_MAX``
        after the first unsaved one."""
        now = time.monotonic()
        if self._autosave_timer is not None:
            self._autosave_timer.stop()
        else:
            self._unsaved_since = now
        delay = max(0.05, min(AUTOSAVE_DELAY, self._unsaved_since + AUTOSAVE_MAX - now))   # 0 breaks a timer
        self._autosave_timer = self.set_timer(delay, self._autosave)
        if self.editor.dirty:
            try:
                files.write_atomic(files.journal_path(self.path), self.editor.text, durable=False)
            except OSError:
                pass                              # the autosave will say what is wrong with the folder

    def _place_cursor(self) -> None:
        """Where the player left the cursor in this file; the first time, at the start of the first kernel's
        body (not on line 1, where typing would break the docstring). Keys pressed before this runs (a fast
        typist, a slow machine) already chose where they go: the cursor is left where they put it."""
        self.cursor_placed = True
        editor = self.editor
        if editor.dirty or editor.cursor_location != (0, 0):
            return
        doc = editor.document
        at = self.app.settings.cursors.get(self.puzzle.slug)
        if at is not None and at[0] < doc.line_count:
            editor.move_cursor((at[0], min(at[1], len(doc[at[0]]))))
        else:
            lines = [doc[row] for row in range(doc.line_count)]
            defs = [row for row, line in enumerate(lines) if line.lstrip().startswith("def ")]
            body = next((row for row in range(defs[0] + 1, len(lines)) if lines[row].strip()), None) \
                if defs else None
            if body is not None:
                editor.move_cursor((body, len(lines[body]) - len(lines[body].lstrip())))
        if editor.cursor_location[1] < 40:
            editor.scroll_to(x=0, animate=False)  # a hidden editor (the task first, on a narrow screen) scrolls

    def _cursor_moved(self, selection) -> None:
        self._cursor = tuple(selection.end)

    def on_unmount(self) -> None:
        if self._cursor is not None:
            row, column = self._cursor
            self.app.settings.update(cursors={**self.app.settings.cursors, self.puzzle.slug: [row, column]})

    def load_from_disk(self) -> None:
        """Show the file as it is on disk (an outside change, a reset): the editor is clean, so the journal of
        its unsaved text goes (the unsaved text itself, where wanted, was kept beside the file first)."""
        self.editor.load()
        self._forget_journal()
        self._subtitle()

    def _forget_journal(self) -> None:
        try:
            files.journal_path(self.path).unlink(missing_ok=True)
        except OSError:
            pass

    def _recover_journal(self) -> bool:
        """Text typed after the last save of a session that died: back in the editor (to be saved), or, if the
        file changed since, kept beside it. True when the editor got it."""
        journal = files.journal_path(self.path)
        try:
            text = files.read_text(journal)
        except (OSError, UnicodeDecodeError):
            return False
        if text == self.editor.text:
            self._forget_journal()
            return False
        if (files.mtime(journal) or 0) < (files.mtime(self.path) or 0):
            try:
                kept = files.keep_copy(self.path, text, "unsaved")
            except OSError:
                return False
            self._forget_journal()
            self.notify(f"Text typed before the app stopped is kept as {kept.name} ({self.path.name} changed "
                        "after it).", severity="warning", timeout=15)
            return False
        editor = self.editor
        editor.replace(text, (0, 0), editor.document.end)       # an edit (undo goes back to the file's text),
        editor.move_cursor(editor.document.end)                 # so the autosave writes it in a moment
        self.notify(f"Recovered what you typed in {self.path.name} just before the app stopped.",
                    title="Nothing lost", timeout=10)
        return True

    def _autosave(self) -> None:
        self._autosave_timer = None
        if self.editor.dirty and not self._offering_reload:
            self.save(quiet=True)

    def _watch_disk(self) -> None:
        editor = self.editor
        if self._offering_reload or not editor.changed_on_disk():
            return
        now = files.mtime(self.path)
        if not editor.dirty:
            self.load_from_disk()
            self.notify(f"{self.path.name} changed on disk; the editor shows the new version.")
            return
        if now == self._declined:
            return
        self._offering_reload = True

        def decide(reload: bool | None) -> None:
            self._offering_reload = False
            if reload:
                kept = files.keep_copy(self.path, editor.text, "unsaved")
                self.load_from_disk()
                self.notify(f"Loaded the new {self.path.name}; your unsaved text is kept as {kept.name}.")
            else:
                self._declined = now
                self.notify("Kept your text. When it is saved, the outside version is kept beside the file.")
                if self._autosave_timer is None:      # its moment passed while the question was open
                    self._autosave_timer = self.set_timer(AUTOSAVE_DELAY, self._autosave)

        self.app.push_screen(Confirm(f"{self.path.name} was changed outside the app.",
                                     "Load that version? Your unsaved text is kept beside the file.",
                                     "Load it"), decide)

    def on_screen_resume(self) -> None:
        self._watch_disk()

    def action_triton(self) -> None:
        """The editor's kernel as a Triton program, and its run (tui/widgets/triton_view.py)."""
        self.show_side("triton")                  # focused: the arrows scroll the program (typing still edits)
        self.query_one(TritonView).start(self.puzzle, self.editor.text, self.path)

    def action_save(self) -> None:
        self.save()

    def action_back(self) -> None:
        if self.running:
            self.action_cancel_check()
            return
        if self.editor.dirty and not self.save(quiet=True):
            return
        self.app.pop_screen()

    # running -------------------------------------------------------------------------------------------------

    def action_run(self, seed: int | None = None) -> None:
        if self.running:
            self.notify("A check is already running (esc stops it).")
            return
        self.running = True
        # keys typed before ctrl+r may still wait in the editor's queue: take the text after them
        self.editor.call_later(self._run_now, seed)

    def action_run_same_seed(self) -> None:
        """Check again on the random cases of the last check (its seed), e.g. to see a fix on the same data."""
        if self.result is None:
            self.notify("No check to repeat yet: ctrl+r runs your file on fresh cases.")
            return
        self.action_run(self.result.seed)

    def _run_now(self, seed: int | None = None) -> None:
        if not self.running:
            return                                # stopped before it started
        text = self.editor.text                   # exactly what the editor shows is what is checked
        if self.editor.dirty:
            self.save(quiet=True)
        self.app.start_check(self.puzzle, text, self.path, seed)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "cancel_check":
            return self.running                   # otherwise ctrl+c copies, as in any editor
        return True

    def action_cancel_check(self) -> None:
        if self.running and not self.app.cancel_check():
            self.check_cancelled()                # stopped before the check had started

    def check_cancelled(self) -> None:
        """The app abandoned this screen's check (called by the app)."""
        self.running = False
        self.results.show_cancelled(self.result is not None)
        self.notify("The check was stopped; its result will not be shown.")

    def show_result(self, result, highlight: bool = True, reveal: bool = True) -> None:
        """Show a finished check (called by the app when the worker is done); ``reveal`` brings the results
        to the front (not when a puzzle reopens with the last check of this session)."""
        self.running = False
        self.result = result
        self._fault_cursor = -1
        after = self.next_puzzle()
        self.results.after_pass = (f"ctrl+n: on to puzzle {after.number}, {after.title}." if after is not None
                                   else "This is the last puzzle.")
        self.results.result = result
        self.query_one(ConsoleView).show(result)
        if reveal:
            self.show_side("results", focus=False)
        else:
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
            if where is None or not where[0] or not same_file(where[0], self.path):
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
        if not quiet:
            self.action_pane("editor")
        elif not self.narrow:
            self.editor.focus()

    def action_visualise(self) -> None:
        if self.result is None or not any(c.reports for c in self.result.cases):
            self.notify("Nothing to show yet: run your file with ctrl+r first (a file that does not compile "
                        "has no run to show).")
            return
        from .visualise import VisualiseScreen

        self.app.push_screen(VisualiseScreen(self.puzzle, self.result))

    # the rest ------------------------------------------------------------------------------------------------

    def next_puzzle(self):
        """The puzzle after this one in the course (None after the last)."""
        puzzles = self.app.puzzles
        later = puzzles[puzzles.index(self.puzzle) + 1:] if self.puzzle in puzzles else []
        return later[0] if later else None

    def action_next_puzzle(self) -> None:
        """Leave for the next puzzle (this file saved first); a check still running is stopped."""
        after = self.next_puzzle()
        if after is None:
            self.notify("This is the last puzzle: esc goes back to the list.")
            return
        if self.running:
            self.action_cancel_check()
        if self.editor.dirty and not self.save(quiet=True):
            return
        self.app.pop_screen()
        self.app.open_puzzle(after)

    def action_hint(self) -> None:
        self.app.reveal_hint(self.puzzle, self)
        self.show_side("task", focus=self.narrow)
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
        self.load_from_disk()
        self.action_pane("editor")
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
        self.load_from_disk()
        self.refresh()
