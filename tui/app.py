"""``GpuPuzzlesApp``: the terminal app, and ``run()``, which ``gpu-puzzles`` calls with no command.

The app holds the game's state — the puzzles, the player's progress, the last check of each puzzle — and
asks ``puzzles`` for everything else: ``checker.check_file`` runs a solution (in a worker thread, so the
screen never freezes), ``workspace`` finds and creates the player's files, ``progress`` records checks and
hints. It draws ``LaunchReport``s; it computes nothing about kernels itself.
"""

from __future__ import annotations

from pathlib import Path

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.reactive import var
from textual.widgets import TextArea

from puzzles import checker, progress, registry, workspace
from puzzles.judge.worker import shared_worker

from .messages import CheckFinished, HintRevealed
from .screens.browser import BrowserScreen
from .screens.confirm import ConfirmQuit
from .screens.help import HelpScreen
from .screens.workspace import WorkspaceScreen


def load_puzzles() -> tuple[list, list[str]]:
    """Every puzzle, and the problems found; a broken puzzle module hides only itself."""
    try:
        return registry.all_puzzles(), []
    except registry.RegistryError:
        puzzles, problems = registry.discover()
        return puzzles, problems


class GpuPuzzlesApp(App):
    """Browse, edit, run and see the puzzles."""

    CSS_PATH = "app.tcss"
    TITLE = "gpu-puzzles"
    BINDINGS = [
        Binding("ctrl+q", "request_quit", "Quit", priority=True, show=False),
        Binding("q", "request_quit_key", "Quit"),
        Binding("f1", "help", "Help", show=False),
        Binding("question_mark", "help_key", "Help"),
    ]

    checking: var[str | None] = var(None)
    """The slug of the puzzle being checked in the background, or None."""

    def __init__(self, puzzles: list | None = None):
        super().__init__()
        if puzzles is None:
            puzzles, self.problems = load_puzzles()
        else:
            self.problems = []
        self.puzzles = list(puzzles)
        self.progress = progress.load_progress()
        self.results: dict[str, object] = {}

    def get_default_screen(self) -> BrowserScreen:
        return BrowserScreen()

    def on_mount(self) -> None:
        for problem in self.problems:
            self.notify(problem, title="A puzzle could not be loaded", severity="warning", timeout=15)
        self._warn()
        if not self.puzzles:
            self.notify("No puzzles are installed.", severity="error")

    def _warn(self) -> None:
        for text in self.progress.warnings:
            self.notify(text, title="Progress", severity="warning", timeout=10)
        self.progress.warnings.clear()

    # state for the screens ------------------------------------------------------------------------------------

    def stars_of(self, slug: str) -> tuple[int, int]:
        """(best stars earned, stars available) for a puzzle."""
        puzzle = next((p for p in self.puzzles if p.slug == slug), None)
        most = checker.max_stars(puzzle) if puzzle is not None else 1
        return self.progress.stars(slug), most

    def hints_of(self, puzzle) -> list[str]:
        return progress.revealed_hints(puzzle, self.progress)

    def reveal_hint(self, puzzle, screen) -> None:
        """Reveal and record the next hint; tell ``screen`` so it can redraw."""
        if not puzzle.hints:
            self.notify("This puzzle has no hints.")
            return
        revealed = progress.reveal_hint(puzzle, self.progress)
        self._warn()
        if revealed is None:
            self.notify(f"All {len(puzzle.hints)} hints are already shown.")
            return
        number, text = revealed
        self.notify(text, title=f"Hint {number} of {len(puzzle.hints)}", timeout=12)
        screen.post_message(HintRevealed(puzzle, number, text))

    def solution_seen(self, slug: str) -> bool:
        entry = self.progress.puzzles.get(slug)
        return bool(entry and entry.solution_revealed)

    def reveal_solution(self, puzzle) -> str | None:
        """The reference solution's text, recorded as seen in the progress (as `gpu-puzzles solution` does).

        None (with a message) when the game has no reference for ``puzzle``.
        """
        try:
            text = progress.reveal_solution(puzzle, self.progress)
        except workspace.WorkspaceError as e:
            self.notify(str(e), title="No reference solution", severity="error", timeout=15)
            return None
        self._warn()
        return text

    def open_puzzle(self, puzzle) -> None:
        """Open the player's file for ``puzzle`` (created from the starter the first time)."""
        try:
            path = workspace.ensure_starter(puzzle)
        except workspace.WorkspaceError as e:
            self.notify(str(e), title="Cannot open the puzzle", severity="error", timeout=15)
            return
        self.push_screen(WorkspaceScreen(puzzle, path))

    # checking ---------------------------------------------------------------------------------------------------

    def start_check(self, puzzle, path: Path) -> None:
        self.checking = puzzle.slug
        self._check(puzzle, Path(path))

    @work(thread=True, exclusive=True, group="check", exit_on_error=False)
    def _check(self, puzzle, path: Path) -> None:
        try:
            result = shared_worker().check_file(puzzle, path, trace=True)   # a warm, sandboxed judge
        except Exception as e:  # check_file promises not to raise; if it does, the app still must not die
            from puzzles.results import CheckResult, Failure

            result = CheckResult(puzzle=puzzle.slug, number=puzzle.number, file=str(path))
            result.failures.append(Failure("error", f"the checker failed: {type(e).__name__}: {e}"))
        self.post_message(CheckFinished(puzzle, result))

    def on_check_finished(self, message: CheckFinished) -> None:
        puzzle, result = message.puzzle, message.result
        self.checking = None
        self.results[puzzle.slug] = result
        before = self.progress.stars(puzzle.slug)
        checker.record_reference_use(puzzle, result, self.progress)   # a file that used solutions/ saw it
        progress.record_check(puzzle, result, self.progress)
        self._warn()
        for screen in self.screen_stack:
            if isinstance(screen, WorkspaceScreen) and screen.puzzle.slug == puzzle.slug:
                screen.show_result(result)
        if result.stars > before:
            self.notify(f"{'★' * result.stars} — a new best for puzzle {puzzle.number}!", title="Stars")

    # quitting and help ------------------------------------------------------------------------------------------

    def _editing(self) -> bool:
        return isinstance(self.focused, TextArea)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ("request_quit_key", "help_key") and self._editing():
            return False        # the editor types q and ?; ctrl+q and f1 still work
        return True

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_help_key(self) -> None:
        self.action_help()

    def action_request_quit_key(self) -> None:
        self.action_request_quit()

    def unsaved(self) -> WorkspaceScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, WorkspaceScreen) and screen.editor.dirty:
                return screen
        return None

    def action_request_quit(self) -> None:
        screen = self.unsaved()
        if screen is None:
            self.exit()
            return
        if isinstance(self.screen, ConfirmQuit):
            return

        def decide(choice: str | None) -> None:
            if choice == "save":
                if screen.save(quiet=True):
                    self.exit()
            elif choice == "discard":
                self.exit()

        self.push_screen(ConfirmQuit(screen.path.name), decide)


def run() -> int:
    """Start the app; the exit status for ``gpu-puzzles``."""
    GpuPuzzlesApp().run()
    return 0


if __name__ == "__main__":
    raise SystemExit(run())
