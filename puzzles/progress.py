"""The player's progress: per puzzle, checks attempted, best stars, hints and solution revealed, when solved.

Stored as ``progress.json`` in the workspace (see ``puzzles.workspace``)::

    {"schema": 1, "puzzles": {"map": {"attempts": 3, "best_stars": 2, "hints_revealed": 1,
                                      "solution_revealed": false, "solved_at": "2025-01-31T12:00:00+00:00",
                                      "last_checked_at": "..."}}}

Writes are atomic (a temporary file in the same folder, then ``os.replace``), so a crash never leaves half a
file. A missing file means no progress yet. A file that cannot be understood is moved aside to
``progress.json.corrupt-<time>`` with a warning, and play continues from empty progress; a field with a wrong
type falls back to its default. Problems are reported in ``Progress.warnings``, never raised.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import workspace
from .files import sibling_name, write_atomic
from .model import Puzzle

SCHEMA = 1
FILE_NAME = "progress.json"


@dataclass
class PuzzleProgress:
    """What the player has done on one puzzle."""

    attempts: int = 0                   # checks of the player's own solution
    best_stars: int = 0
    hints_revealed: int = 0
    solution_revealed: bool = False
    solved_at: str | None = None        # ISO time of the first passing check
    last_checked_at: str | None = None


@dataclass
class Progress:
    """Every puzzle's progress, keyed by slug, and the file it came from."""

    path: Path
    puzzles: dict[str, PuzzleProgress] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    writable: bool = True       # False when saving would overwrite a file that could not be read or moved

    def entry(self, slug: str) -> PuzzleProgress:
        """The progress of ``slug``, created empty if the player has not started it."""
        return self.puzzles.setdefault(slug, PuzzleProgress())

    def stars(self, slug: str) -> int:
        entry = self.puzzles.get(slug)
        return entry.best_stars if entry else 0

    def to_dict(self) -> dict:
        return {"schema": SCHEMA, "puzzles": {slug: asdict(p) for slug, p in sorted(self.puzzles.items())}}


def progress_path() -> Path:
    return workspace.home() / FILE_NAME


def load_progress(path: Path | None = None) -> Progress:
    """Read the progress file; a missing file gives empty progress, a corrupt one is moved aside."""
    path = Path(path) if path is not None else progress_path()
    progress = Progress(path=path)
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return progress
    except OSError as e:
        progress.warnings.append(f"cannot read {path} ({e.strerror or e}); progress will not be saved")
        progress.writable = False
        return progress
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("puzzles", {}), dict):
            raise ValueError("not a progress document")
    except ValueError as e:   # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        moved, message = _move_aside(path, e)
        progress.warnings.append(message)
        progress.writable = moved
        return progress
    for slug, raw in data.get("puzzles", {}).items():
        if isinstance(slug, str) and isinstance(raw, dict):
            progress.puzzles[slug] = _entry_from(raw)
    return progress


def save_progress(progress: Progress) -> bool:
    """Write ``progress`` atomically. Returns False (with a warning added) if it cannot be written."""
    path = progress.path
    if not progress.writable:
        return False
    try:
        write_atomic(path, json.dumps(progress.to_dict(), indent=2) + "\n")
    except OSError as e:
        progress.warnings.append(f"cannot save progress to {path}: {e.strerror or e}")
        return False
    return True


def record_check(puzzle: Puzzle, result: Any, progress: Progress | None = None) -> Progress:
    """Count a check of the player's own solution (a ``CheckResult``) and keep the best stars."""
    progress = progress if progress is not None else load_progress()
    entry = progress.entry(puzzle.slug)
    now = _now()
    entry.attempts += 1
    entry.last_checked_at = now
    entry.best_stars = max(entry.best_stars, int(result.stars))
    if result.passed and entry.solved_at is None:
        entry.solved_at = now
    save_progress(progress)
    return progress


def reveal_hint(puzzle: Puzzle, progress: Progress | None = None) -> tuple[int, str] | None:
    """Reveal the next hint and record it: (its number from 1, its text), or None when all are revealed."""
    progress = progress if progress is not None else load_progress()
    entry = progress.entry(puzzle.slug)
    if entry.hints_revealed >= len(puzzle.hints):
        return None
    entry.hints_revealed += 1
    save_progress(progress)
    return entry.hints_revealed, puzzle.hints[entry.hints_revealed - 1]


def revealed_hints(puzzle: Puzzle, progress: Progress) -> list[str]:
    """The hints the player has already seen, in order."""
    entry = progress.puzzles.get(puzzle.slug)
    return list(puzzle.hints[: entry.hints_revealed if entry else 0])


def reveal_solution(puzzle: Puzzle, progress: Progress | None = None) -> str:
    """The reference solution's text; records that the player has seen it. Raises ``WorkspaceError``."""
    text = workspace.read_reference(puzzle)
    progress = progress if progress is not None else load_progress()
    progress.entry(puzzle.slug).solution_revealed = True
    save_progress(progress)
    return text


def _entry_from(raw: dict) -> PuzzleProgress:
    entry = PuzzleProgress()
    for name, default in asdict(entry).items():
        value = raw.get(name, default)
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        else:
            ok = value is None or isinstance(value, str)
        setattr(entry, name, value if ok else default)
    return entry


def _move_aside(path: Path, error: Exception) -> tuple[bool, str]:
    aside = sibling_name(path, "corrupt")
    try:
        os.replace(path, aside)
    except OSError as e:
        return False, (f"{path} is corrupt ({error}) and could not be moved aside ({e.strerror or e}); "
                       f"playing on without saving progress")
    return True, f"{path} was corrupt ({error}); kept it as {aside.name} and started with empty progress"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
