"""The app's one way into the checker: check exactly the editor's text, in the background, cancellably.

``check_text`` is the only call into the judge (its warm worker, ``puzzles.judge.worker``, which runs the
player's code in a sandbox). It checks exactly the text it is given (the editor's, taken when the player
pressed ctrl+r), and writes it atomically to a snapshot beside the workspace, so the source lines the views
show are the lines that ran, whatever typing, autosave or an outside program does to the player's file.

``CheckRunner`` runs one check at a time in a thread. ``cancel()`` abandons the running check: its result is
dropped when it arrives and the app is free at once, and the judge's worker stops the check in flight.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from puzzles.files import write_atomic
from puzzles.judge.worker import shared_worker

SNAPSHOT_DIR = ".checked"


def snapshot_path(path: Path) -> Path:
    """Where the text of a check of ``path`` is written: ``<folder>/.checked/<name>``."""
    path = Path(path)
    return path.parent / SNAPSHOT_DIR / path.name


def same_file(a: str | Path, b: str | Path) -> bool:
    """``a`` names the player's file ``b`` or the snapshot of it that was checked."""
    try:
        a = Path(a).resolve()
        b = Path(b).resolve()
    except (OSError, RuntimeError):
        return False
    return a == b or a == snapshot_path(b).resolve()


def check_text(puzzle, text: str, path: Path, seed: int | None = None):
    """Check ``text`` as the solution of ``puzzle`` whose file is ``path``; a ``CheckResult``, never a raise.
    ``seed`` replays a check's random cases (None: a fresh draw, shown in the result).

    The judge's warm worker checks exactly ``text`` (the player's code runs in its sandbox, never in the app);
    the snapshot on disk is what the views read the source lines from."""
    snapshot = snapshot_path(path)
    try:
        write_atomic(snapshot, text)
        result = shared_worker().check(puzzle, text, str(snapshot.resolve()), seed=seed, trace=True)
        return _as_players_file(result, snapshot, Path(path))
    except Exception as e:  # check_file promises not to raise; if it does, the app must still carry on
        from puzzles.results import CheckResult, Failure

        result = CheckResult(puzzle=puzzle.slug, number=puzzle.number, file=str(path))
        result.failures.append(Failure("error", f"the checker failed: {type(e).__name__}: {e}"))
        return result


def _as_players_file(result, snapshot: Path, path: Path):
    """Messages name the player's file, not the snapshot (which is the same text). The launches' own
    file names stay the snapshot's, so the views read the source lines that ran."""
    old, new = str(snapshot.resolve()), str(path)
    result.file = str(path)
    for failure in result.failures + [f for c in result.cases for f in c.failures]:
        failure.message = failure.message.replace(old, new)
        if failure.filename and same_file(failure.filename, path):
            failure.filename = new
        fault = failure.fault
        if fault is not None and getattr(fault, "filename", "") and same_file(fault.filename, path):
            fault.filename = new
    return result


@dataclass
class CheckRun:
    """One check the player asked for."""

    number: int
    puzzle: object
    text: str
    path: Path
    seed: int | None = None        # the seed of the random cases (None: a fresh one)
    cancelled: bool = False


class CheckRunner:
    """Starts checks in a thread and delivers results with ``deliver(run, result)`` unless cancelled.

    ``deliver`` is called from the worker thread; the app passes ``call_from_thread``-safe code.
    """

    def __init__(self, deliver: Callable[[CheckRun, object], None],
                 check: Callable[..., object] = check_text):
        self._deliver = deliver
        self.check = check                     # (puzzle, text, path, seed=) -> CheckResult, run in the thread
        self._numbers = itertools.count(1)
        self._one_at_a_time = threading.Lock()
        self.current: CheckRun | None = None

    def warm_up(self) -> None:
        """Start the judge's worker now (it imports numba and gpusim in the background), so that the first
        ctrl+r does not wait for it."""
        if self.check is check_text:
            shared_worker()

    @property
    def running(self) -> bool:
        return self.current is not None

    def start(self, puzzle, text: str, path: Path, seed: int | None = None) -> CheckRun:
        run = CheckRun(next(self._numbers), puzzle, text, Path(path), seed)
        self.current = run
        threading.Thread(target=self._work, args=(run,), name=f"check-{run.number}", daemon=True).start()
        return run

    def cancel(self) -> CheckRun | None:
        """Abandon the running check; returns it (None when nothing was running)."""
        run, self.current = self.current, None
        if run is not None:
            run.cancelled = True
            self._stop(run)
        return run

    def _stop(self, run: CheckRun) -> None:
        """Stop the work of ``run``: the judge's worker stops the check in flight."""
        if self.check is check_text:
            shared_worker().cancel()

    def _work(self, run: CheckRun) -> None:
        with self._one_at_a_time:              # an abandoned check finishes before the next one starts
            if run.cancelled:
                return
            result = self.check(run.puzzle, run.text, run.path, seed=run.seed)
        if not run.cancelled:
            self._deliver(run, result)

    def finished(self, run: CheckRun) -> bool:
        """Called on the app's thread when ``run``'s result arrives: True when it is still wanted."""
        if run.cancelled or self.current is not run:
            return False
        self.current = None
        return True
