"""The player's workspace: the folder that holds their solution files and their progress.

The folder is ``$GPU_PUZZLES_HOME`` when that is set, else the platform's user data directory
(``platformdirs.user_data_dir("gpu-puzzles")``, e.g. ``~/.local/share/gpu-puzzles`` on Linux). A puzzle's
file there is ``pNN_<starter file>`` (``p01_map.py``), copied from ``puzzles/starters/`` the first time it is
needed and never overwritten afterwards: the player's work is only ever replaced by ``reset_to_starter``,
which keeps a copy of it first. The copy is atomic (``puzzles.files``): never an empty or half file.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from . import files
from .model import Puzzle

ENV_HOME = "GPU_PUZZLES_HOME"
STARTERS_DIR = Path(__file__).resolve().parent / "starters"
SOLUTIONS_DIR = Path(__file__).resolve().parent.parent / "solutions"
#: a temporary file of the player's file older than this was left by a save that was killed
STRAY_AGE = 60.0
#: an empty player's file older than this is not a save in progress
EMPTY_AGE = 10.0


class WorkspaceError(Exception):
    """The workspace cannot be used: a starter or reference is missing, or a file cannot be written."""


def home() -> Path:
    """The workspace folder (not created here)."""
    configured = os.environ.get(ENV_HOME, "").strip()
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("gpu-puzzles", appauthor=False))


def workspace_path(puzzle: Puzzle) -> Path:
    """Where the player's solution of ``puzzle`` lives (it may not exist yet)."""
    return home() / f"p{puzzle.number:02d}_{puzzle.starter_file}"


def starter_path(puzzle: Puzzle) -> Path:
    """The starter file shipped with the game."""
    return STARTERS_DIR / puzzle.starter_file


def reference_path(puzzle: Puzzle) -> Path:
    """The reference solution shipped with the game."""
    return _solutions_dir() / puzzle.solution_file


def ensure_starter(puzzle: Puzzle) -> Path:
    """The player's file for ``puzzle``, copied from the starter on first use; an existing one is kept.

    The copy appears whole or not at all: a full disk leaves no file (and a ``WorkspaceError``), so the next
    call copies the starter again. An empty file older than ``EMPTY_AGE`` seconds (what a failed copy of an
    earlier version left, or a file the player emptied) is filled with the starter. Temporary files that a
    killed save of this file left are removed.
    """
    target = workspace_path(puzzle)
    files.remove_stray_temps(target, older_than=STRAY_AGE)
    try:
        info = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        info = None
    except OSError as e:
        raise WorkspaceError(f"cannot use {target}: {e.strerror or e}") from None
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            raise WorkspaceError(f"{target} is not a regular file; move it away and gpu-puzzles will make a "
                                 f"new one from the starter")
        if info.st_size > 0 or time.time() - info.st_mtime < EMPTY_AGE:
            return target
    source = starter_path(puzzle)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, ValueError) as e:
        raise WorkspaceError(f"the starter for puzzle {puzzle.number} ({source}) cannot be read: "
                             f"{getattr(e, 'strerror', None) or e}") from None
    try:
        if info is None:
            files.create_atomic(target, text)        # False: made meanwhile (the TUI and the CLI at once)
        elif os.stat(target).st_size == 0:
            files.write_atomic(target, text)
    except OSError as e:
        raise WorkspaceError(f"cannot create {target}: {e.strerror or e}") from None
    return target


def reset_to_starter(puzzle: Puzzle) -> tuple[Path, Path | None]:
    """Replace the player's file with the starter, keeping the old one as ``<file>.bak-<time>``.

    Returns (the file, the backup or None when there was nothing to keep).
    """
    target = workspace_path(puzzle)
    backup = None
    if os.path.lexists(target):
        try:
            backup = files.move_aside(target, "bak")
        except OSError as e:
            raise WorkspaceError(f"cannot move {target} aside: {e.strerror or e}") from None
    return ensure_starter(puzzle), backup


def read_reference(puzzle: Puzzle) -> str:
    """The text of the reference solution."""
    path = reference_path(puzzle)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise WorkspaceError(f"the reference solution for puzzle {puzzle.number} ({path}) cannot be read: "
                             f"{e.strerror or e}") from None


def _solutions_dir() -> Path:
    """``solutions/`` beside the package in a checkout; the installed ``solutions`` package otherwise."""
    if SOLUTIONS_DIR.is_dir():
        return SOLUTIONS_DIR
    import importlib.util

    spec = importlib.util.find_spec("solutions")
    if spec is not None and spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    return SOLUTIONS_DIR
