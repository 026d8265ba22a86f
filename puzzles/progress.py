"""The player's progress: per puzzle, checks attempted, best stars, hints and solution revealed, when solved.

Stored as ``progress.json`` in the workspace (see ``puzzles.workspace``)::

    {"schema": 1, "puzzles": {"map": {"attempts": 3, "best_stars": 2, "hints_revealed": 1,
                                      "solution_revealed": false, "solved_at": "2025-01-31T12:00:00+00:00",
                                      "last_checked_at": "..."}}}

Any number of processes may use the file at once (the CLI, the TUI, ``check --all``): every change —
``record_check``, ``reveal_hint``, ``reveal_solution`` — reads the file, changes it and writes it back while
holding an exclusive lock on ``.progress.json.lock`` beside it, so no update is lost, and the ``Progress`` in
memory is refreshed with what the others wrote. Writes are atomic (``puzzles.files``), so ``kill -9`` never
leaves half a file; temporary files such a kill leaves are removed the next time the file is read.

Nothing the player had is ever dropped silently. A missing file means no progress yet. A file that cannot be
understood (not JSON, nested too deeply, not a regular file — a FIFO, a folder —, far too large) is moved
aside to ``progress.json.corrupt-<time>`` and play goes on from empty progress. A file that is understood only
in part (entries or fields of the wrong type, fields this version does not know, a newer schema) is copied
to ``progress.json.bak-<time>`` (``.schema<N>-<time>`` for a newer schema) and saved again with the parts that
are understood. A read-only file is read and never written. Each of these is one message in
``Progress.warnings``; nothing here raises.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from . import files, workspace
from .model import Puzzle

SCHEMA = 1
FILE_NAME = "progress.json"
#: a progress file is a few KiB; one past this is not ours, and reading it could exhaust memory
MAX_BYTES = 16 << 20
#: problems named one by one in a warning; the rest are counted
SHOWN_PROBLEMS = 3

T = TypeVar("T")


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
    writable: bool = True       # False while the file is read-only, unreadable, or could not be moved aside
    told: set[str] = field(default_factory=set, repr=False, compare=False)   # warnings given once already

    def entry(self, slug: str) -> PuzzleProgress:
        """The progress of ``slug``, created empty if the player has not started it."""
        return self.puzzles.setdefault(slug, PuzzleProgress())

    def stars(self, slug: str) -> int:
        entry = self.puzzles.get(slug)
        return entry.best_stars if entry else 0

    def warn(self, text: str) -> None:
        """Add a warning, once per ``Progress`` (``check --all`` would otherwise repeat it per puzzle)."""
        if text not in self.told:
            self.told.add(text)
            self.warnings.append(text)

    def to_dict(self) -> dict:
        return {"schema": SCHEMA, "puzzles": {slug: asdict(p) for slug, p in sorted(self.puzzles.items())}}


def progress_path() -> Path:
    return workspace.home() / FILE_NAME


def lock_path(path: Path) -> Path:
    """The lock file every reader and writer of the progress file ``path`` holds."""
    return path.with_name(f".{path.name}.lock")


def load_progress(path: Path | None = None) -> Progress:
    """Read the progress file; see the module's text for what happens to a missing, odd or corrupt one."""
    progress = Progress(path=Path(path) if path is not None else progress_path())
    try:
        with files.locked(lock_path(progress.path)) as held:
            _read_into(progress, settle=held)
    except files.LockTimeout as e:
        _read_into(progress, settle=False)
        progress.warn(f"{progress.path} is locked ({e}); read it without the lock")
    return progress


def save_progress(progress: Progress) -> bool:
    """Write all of ``progress`` over the file (under the lock). False, with a warning, if it is not written.

    This replaces what other processes wrote since ``progress`` was read; the changes below do not.
    """
    try:
        with files.locked(lock_path(progress.path)):
            if not progress.writable:
                return False
            if _read_only(progress.path):
                progress.warn(_read_only_message(progress.path))
                return False
            return _write(progress)
    except files.LockTimeout as e:
        progress.warn(f"progress not saved: {e}")
        return False


def record_check(puzzle: Puzzle, result: Any, progress: Progress | None = None) -> Progress:
    """Count a check of the player's own solution (a ``CheckResult``) and keep the best stars."""
    progress = progress if progress is not None else Progress(path=progress_path())
    now = _now()

    def count(p: Progress) -> None:
        entry = p.entry(puzzle.slug)
        entry.attempts += 1
        entry.last_checked_at = now
        entry.best_stars = max(entry.best_stars, int(result.stars))
        if result.passed and entry.solved_at is None:
            entry.solved_at = now

    _change(progress, count)
    return progress


def reveal_hint(puzzle: Puzzle, progress: Progress | None = None) -> tuple[int, str] | None:
    """Reveal the next hint and record it: (its number from 1, its text), or None when all are revealed."""
    progress = progress if progress is not None else Progress(path=progress_path())

    def reveal(p: Progress) -> tuple[int, str] | None:
        entry = p.entry(puzzle.slug)
        if entry.hints_revealed >= len(puzzle.hints):
            return None
        entry.hints_revealed += 1
        return entry.hints_revealed, puzzle.hints[entry.hints_revealed - 1]

    return _change(progress, reveal)


def revealed_hints(puzzle: Puzzle, progress: Progress) -> list[str]:
    """The hints the player has already seen, in order."""
    entry = progress.puzzles.get(puzzle.slug)
    return list(puzzle.hints[: entry.hints_revealed if entry else 0])


def reveal_solution(puzzle: Puzzle, progress: Progress | None = None) -> str:
    """The reference solution's text; records that the player has seen it. Raises ``WorkspaceError``."""
    text = workspace.read_reference(puzzle)
    progress = progress if progress is not None else Progress(path=progress_path())

    def mark(p: Progress) -> None:
        p.entry(puzzle.slug).solution_revealed = True

    _change(progress, mark)
    return text


# reading and changing under the lock ----------------------------------------------------------------------------

def _change(progress: Progress, change: Callable[[Progress], T]) -> T:
    """Apply ``change`` to the file's current content and write it back, all under the lock.

    ``progress`` is refreshed from the file first, so what other processes wrote is kept. When the file
    cannot be read or written, ``change`` still applies to ``progress`` in memory, with a warning.
    """
    try:
        progress.path.parent.mkdir(parents=True, exist_ok=True)     # a place for the lock file
    except OSError:
        pass
    try:
        with files.locked(lock_path(progress.path)) as held:
            _read_into(progress, settle=held)
            outcome = change(progress)
            if progress.writable:
                _write(progress)
            return outcome
    except files.LockTimeout as e:
        _read_into(progress, settle=False)          # a whole file still (writes are atomic), just not locked
        progress.warn(f"progress not saved: {e}; close the other gpu-puzzles or try again")
        return change(progress)


def _read_into(progress: Progress, settle: bool) -> None:
    """Refresh ``progress`` from its file. With ``settle`` (the lock is held) a corrupt file is moved aside,
    a partly understood one backed up and saved clean, and stray temporary files are removed."""
    path = progress.path
    if settle:
        files.remove_stray_temps(path)
    kind, content = _read_file(path)
    if kind == "missing":
        progress.puzzles, progress.writable = {}, True
        return
    if kind == "unreadable":
        progress.warn(f"cannot read {path} ({content}); progress will not be saved")
        progress.writable = False
        return
    if kind == "parsed":
        try:
            puzzles, problems, schema = _parse(content)
        except ValueError as e:
            kind, content = "corrupt", str(e)
    if kind != "parsed":
        _set_aside(progress, content, settle)
        return
    progress.puzzles, progress.writable = puzzles, True
    if _read_only(path):
        progress.writable = False
        progress.warn(_read_only_message(path))
        if problems:
            progress.warn(f"{path} has {_summary(problems)}; ignoring those (the file is read-only, so it is "
                          f"left as it is)")
        return
    if problems and settle:
        _back_up_and_clean(progress, problems, schema)
    elif problems:
        progress.warn(f"{path} has {_summary(problems)}; ignoring those for now")


def _read_file(path: Path) -> tuple[str, Any]:
    """("missing", None), ("unreadable", why), ("corrupt", why) or ("parsed", the JSON value).

    Opens without blocking and reads only a regular file, so a FIFO or a device at the path never hangs.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return "missing", None
    except OSError as e:
        return "unreadable", e.strerror or str(e)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "corrupt", f"it is {_file_kind(info.st_mode)}, not a file"
        if info.st_size > MAX_BYTES:
            return "corrupt", f"it is {info.st_size:,} bytes, far more than progress takes"
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        return "unreadable", e.strerror or str(e)
    finally:
        os.close(fd)
    if size > MAX_BYTES:
        return "corrupt", "it grew past the size progress takes while being read"
    try:
        return "parsed", json.loads(b"".join(chunks).decode("utf-8-sig"))
    except RecursionError:
        return "corrupt", "it is nested too deeply to read"
    except ValueError as e:     # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        return "corrupt", _clip(str(e), 120)


def _parse(data: Any) -> tuple[dict[str, PuzzleProgress], list[str], int]:
    """(the entries understood, what was not understood, the file's schema). ``ValueError``: no progress."""
    if not isinstance(data, dict):
        raise ValueError(f"not a progress document (a JSON {type(data).__name__})")
    entries = data.get("puzzles", {})
    if not isinstance(entries, dict):
        raise ValueError(f"not a progress document ('puzzles' is a JSON {type(entries).__name__})")
    problems = []
    schema = data.get("schema", SCHEMA)
    if not _is_count(schema) or schema < 1:
        problems.append(f"schema {_clip(repr(schema))} (expected a number)")
        schema = SCHEMA
    elif schema > SCHEMA:
        problems.append(f"progress schema {schema}")
    problems += [f"unknown field {_clip(repr(key))}" for key in data if key not in ("schema", "puzzles")]
    puzzles = {}
    for slug, raw in entries.items():
        if not isinstance(raw, dict):
            problems.append(f"puzzle {_clip(repr(slug))} is not an entry ({type(raw).__name__})")
            continue
        puzzles[slug] = entry = PuzzleProgress()
        for f in fields(PuzzleProgress):
            if f.name in raw:
                value = raw[f.name]
                if _fits(value, getattr(entry, f.name)):
                    setattr(entry, f.name, value)
                else:
                    problems.append(f"{_clip(repr(slug))} {f.name}={_clip(repr(value))}")
        known = {f.name for f in fields(PuzzleProgress)}
        problems += [f"{_clip(repr(slug))} unknown field {_clip(repr(k))}" for k in raw if k not in known]
    return puzzles, problems, schema


def _fits(value: Any, default: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return _is_count(value)
    return value is None or isinstance(value, str)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _set_aside(progress: Progress, why: str, settle: bool) -> None:
    """A file that holds no usable progress: move it aside (under the lock) and go on from memory."""
    path = progress.path
    if not settle:
        progress.writable = False
        progress.warn(f"{path} is corrupt ({why}); progress will not be saved this time")
        return
    try:
        aside = files.move_aside(path, "corrupt")
    except OSError as e:
        progress.writable = False
        progress.warn(f"{path} is corrupt ({why}) and could not be moved aside ({e.strerror or e}); "
                      f"playing on without saving progress")
        return
    progress.writable = True
    progress.warn(f"{path} was corrupt ({why}); kept it as {aside.name} and started with "
                  f"{'the progress read earlier' if progress.puzzles else 'empty progress'}")


def _back_up_and_clean(progress: Progress, problems: list[str], schema: int) -> None:
    """A file understood in part: keep a copy of it whole, then save it again with the parts understood."""
    path = progress.path
    tag = f"schema{schema}" if schema > SCHEMA else "bak"
    try:
        copy = files.keep_beside(path, tag, path.read_bytes())
    except OSError as e:
        progress.writable = False
        progress.warn(f"{path} has {_summary(problems)} and no copy of it could be kept ({e.strerror or e}); "
                      f"progress will not be saved, so that nothing is lost")
        return
    if schema > SCHEMA:
        head = (f"{path} was written by a newer gpu-puzzles (progress schema {schema}; this one knows "
                f"{SCHEMA})")
    else:
        head = f"{path} has {_summary(problems)}"
    if _write(progress):
        progress.warn(f"{head}; kept the whole file as {copy.name} and saved again what this version "
                      f"understands")


def _write(progress: Progress) -> bool:
    try:
        files.write_atomic(progress.path, json.dumps(progress.to_dict(), indent=2) + "\n")
    except OSError as e:
        progress.warn(f"cannot save progress to {progress.path}: {e.strerror or e}")
        return False
    return True


def _read_only(path: Path) -> bool:
    """True for an existing file the player has made read-only (no write bit; root ignores permissions,
    so the bits are read, not only ``os.access``)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (mode & 0o222) or not os.access(path, os.W_OK)


def _read_only_message(path: Path) -> str:
    return f"{path} is read-only, so your progress is shown but not saved (make it writable to save it again)"


def _summary(problems: list[str]) -> str:
    shown = "; ".join(problems[:SHOWN_PROBLEMS])
    more = len(problems) - SHOWN_PROBLEMS
    return f"what this version does not understand ({shown}{f'; and {more} more' if more > 0 else ''})"


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def _clip(text: str, most: int = 40) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
