"""``GpuPuzzlesApp``: the terminal app.

The app holds the game's state — the puzzles, the player's progress and settings, the last check of each
puzzle — and asks ``puzzles`` for everything else: ``checking.check_text`` runs a solution (in a thread, so
the screen never freezes, and cancellably), ``workspace`` finds and creates the player's files, ``progress``
records checks and hints. It draws ``LaunchReport``s; it computes nothing about kernels itself.

``run()`` (what ``gpu-puzzles`` calls with no command) starts it under ``guard``, which gives the terminal
back in a usable state even if the process dies.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual.app import App
from textual.binding import Binding
from textual.reactive import var
from textual.widgets import TextArea

from puzzles import checker, progress, registry, workspace

from .checking import CheckRunner
from .messages import CheckFinished, HintRevealed
from .screens.browser import BrowserScreen
from .screens.chapter import ChapterComplete, ChapterIntroduction
from .screens.confirm import ConfirmQuit
from .screens.help import HelpScreen
from .screens.welcome import WelcomeScreen
from .screens.workspace import WorkspaceScreen
from .settings import load_settings

SCREENSHOTS = "screenshots"


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
        Binding("f1", "help", "Help", priority=True),
        Binding("question_mark", "help_key", "Help", show=False),
        Binding("f9", "export_svg", "Save SVG", priority=True, show=False),
        Binding("f10", "toggle_dark", "Dark/light", priority=True, show=False),
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
        self.settings = load_settings()
        self.results: dict[str, object] = {}
        self.runner = CheckRunner(lambda run, result: self.post_message(CheckFinished(run.puzzle, result, run)))
        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme

    def get_default_screen(self) -> BrowserScreen:
        return BrowserScreen()

    def on_mount(self) -> None:
        for problem in self.problems:
            self.notify(problem, title="A puzzle could not be loaded", severity="warning", timeout=15)
        self._warn()
        if not self.puzzles:
            self.notify("No puzzles are installed.", severity="error")
        elif not self.settings.welcome_seen:
            self.push_screen(WelcomeScreen(), self._welcome_done)
        else:
            last = self.puzzle_of(self.settings.last_puzzle)
            if last is not None:
                self.notify(f"Puzzle {last.number}, {last.title}, is where you left off: enter opens it.",
                            title="Welcome back", timeout=8)

    def _welcome_done(self, choice: str | None) -> None:
        self.settings.update(welcome_seen=True)
        if choice == "start" and self.puzzles:
            self.open_puzzle(self.puzzles[0])

    def watch_theme(self, theme: str) -> None:
        if getattr(self, "settings", None) is not None and theme != self.settings.theme:
            self.settings.update(theme=theme)

    def notify(self, message: str, *, title: str = "", severity="information", timeout: float | None = None,
               markup: bool = False) -> None:
        """A toast. Never markup: hints and file names are shown as written (``tile[t]`` stays ``tile[t]``)."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def _warn(self) -> None:
        for text in self.progress.warnings:
            self.notify(text, title="Progress", severity="warning", timeout=10)
        self.progress.warnings.clear()

    # state for the screens ------------------------------------------------------------------------------------

    def puzzle_of(self, slug: str):
        return next((p for p in self.puzzles if p.slug == slug), None)

    def stars_of(self, slug: str) -> tuple[int, int]:
        """(best stars earned, stars available) for a puzzle."""
        puzzle = self.puzzle_of(slug)
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

    def chapter_puzzles(self, chapter: int) -> list:
        return [p for p in self.puzzles if p.chapter == chapter]

    def open_puzzle(self, puzzle, introduce: bool = True) -> None:
        """Open the player's file for ``puzzle`` (created from the starter the first time).

        The first puzzle of a chapter, opened for the first time, comes after the chapter's introduction.
        """
        chapter = puzzle.chapter
        first = self.chapter_puzzles(chapter)[:1] == [puzzle]
        if (introduce and first and chapter not in self.settings.introductions_seen
                and registry.chapter_introduction(chapter) and not self.progress.puzzles.get(puzzle.slug)):
            self.settings.update(introductions_seen=[*self.settings.introductions_seen, chapter])

            def go(start: bool | None) -> None:
                if start:
                    self.open_puzzle(puzzle, introduce=False)

            self.push_screen(ChapterIntroduction(chapter, puzzle), go)
            return
        try:
            path = workspace.ensure_starter(puzzle)
        except workspace.WorkspaceError as e:
            self.notify(str(e), title="Cannot open the puzzle", severity="error", timeout=15)
            return
        self.settings.update(last_puzzle=puzzle.slug)
        self.push_screen(WorkspaceScreen(puzzle, path))

    # checking ---------------------------------------------------------------------------------------------------

    def start_check(self, puzzle, text: str, path: Path, seed: int | None = None) -> None:
        """Check ``text`` (the editor's, as it is now) as ``puzzle``'s solution in ``path``; ``seed`` replays
        the random cases of an earlier check (None: fresh ones)."""
        self.checking = puzzle.slug
        self.runner.start(puzzle, text, Path(path), seed)

    def cancel_check(self) -> bool:
        """Abandon the running check (its result is dropped); False when none was running."""
        run = self.runner.cancel()
        self.checking = None
        if run is None:
            return False
        for screen in self.screen_stack:
            if isinstance(screen, WorkspaceScreen) and screen.puzzle.slug == run.puzzle.slug:
                screen.check_cancelled()
        return True

    def on_check_finished(self, message: CheckFinished) -> None:
        if message.run is not None and not self.runner.finished(message.run):
            return                        # a cancelled check: its result is not wanted
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
        if result.passed and before == 0:
            self._maybe_chapter_complete(puzzle)

    def _maybe_chapter_complete(self, puzzle) -> None:
        chapter = self.chapter_puzzles(puzzle.chapter)
        if chapter and all(self.progress.stars(p.slug) > 0 for p in chapter):
            later = [p for p in self.puzzles if p.chapter > puzzle.chapter]
            self.push_screen(ChapterComplete(puzzle.chapter, chapter, self.stars_of, later[0] if later else None),
                             self._chapter_complete_done)

    def _chapter_complete_done(self, next_puzzle) -> None:
        if next_puzzle is not None:
            while isinstance(self.screen, WorkspaceScreen):
                if self.screen.editor.dirty and not self.screen.save(quiet=True):
                    return
                self.pop_screen()
            self.open_puzzle(next_puzzle)

    # quitting, help, themes and screenshots ----------------------------------------------------------------------

    def _editing(self) -> bool:
        return isinstance(self.focused, TextArea)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ("request_quit_key", "help_key") and (self._editing() or isinstance(self.screen,
                                                                                         WorkspaceScreen)):
            return False        # in the workspace q and ? are typed into the file; ctrl+q and f1 still work
        return True

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
        else:
            self.push_screen(HelpScreen())

    def action_help_quit(self) -> None:
        """ctrl+c outside a check and outside text: say how to quit (plain text, as every toast here)."""
        self.notify("Press ctrl+q to quit (your work is saved first).", title="Do you want to quit?")

    def action_help_key(self) -> None:
        self.action_help()

    def action_toggle_dark(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    def action_export_svg(self) -> Path | None:
        """Save the screen as an SVG picture in the workspace's ``screenshots`` folder; say where."""
        folder = workspace.home() / SCREENSHOTS
        name = f"{type(self.screen).__name__.removesuffix('Screen').lower() or 'screen'}-" \
               f"{time.strftime('%Y%m%d-%H%M%S')}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / f"{name}.svg"
            n = 1
            while target.exists():
                target, n = folder / f"{name}-{n}.svg", n + 1
            self.save_screenshot(filename=target.name, path=str(folder))
        except OSError as e:
            self.notify(f"Could not save the picture in {folder}: {e.strerror or e}", severity="error")
            return None
        self.notify(str(target), title="Saved the screen as SVG", timeout=10)
        return target

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """The command palette's screenshot lands in the workspace too (there may be no ~/Downloads)."""
        saved = self.action_export_svg()
        return str(saved) if saved is not None else None

    def action_request_quit_key(self) -> None:
        self.action_request_quit()

    def unsaved(self) -> WorkspaceScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, WorkspaceScreen) and screen.editor.dirty:
                return screen
        return None

    def action_request_quit(self) -> None:
        screen = self.unsaved()
        if screen is not None and screen.save(quiet=True):
            screen = None                # autosave's last word: nothing typed is left unsaved
        if screen is None:
            self.runner.cancel()
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
    """Start the app in a guarded child process; the exit status for ``gpu-puzzles``."""
    from .guard import run_guarded

    return run_guarded()


def run_here() -> int:
    """Start the app in this process (what the guarded child runs)."""
    GpuPuzzlesApp().run()
    return 0


if __name__ == "__main__":
    raise SystemExit(run())
