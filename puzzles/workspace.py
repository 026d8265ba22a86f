"""The player's workspace: the folder that holds their solution files and their progress.

The folder is ``$GPU_PUZZLES_HOME`` when that is set, else the platform's user data directory
(``platformdirs.user_data_dir("gpu-puzzles")``, e.g. ``~/.local/share/gpu-puzzles`` on Linux). A puzzle's
file there is ``pNN_<starter file>`` (``p01_map.py``), copied from ``puzzles/starters/`` the first time it is
needed and never overwritten afterwards: the player's work is only ever replaced by ``reset_to_starter``,
which keeps a copy of it first.
"""

from __future__ import annotations

import os
from pathlib import Path

from .files import sibling_name
from .model import Puzzle

ENV_HOME = "GPU_PUZZLES_HOME"
STARTERS_DIR = Path(__file__).resolve().parent / "starters"
SOLUTIONS_DIR = Path(__file__).resolve().parent.parent / "solutions"


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
    """The player's file for ``puzzle``, copied from the starter on first use; an existing one is kept."""
    target = workspace_path(puzzle)
    if target.exists():
        return target
    source = starter_path(puzzle)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as e:
        raise WorkspaceError(f"the starter for puzzle {puzzle.number} ({source}) cannot be read: "
                             f"{e.strerror or e}") from None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "x", encoding="utf-8") as f:   # "x": fails rather than overwrite
            f.write(text)
    except FileExistsError:
        pass                                              # created meanwhile (the TUI and the CLI at once)
    except OSError as e:
        raise WorkspaceError(f"cannot create {target}: {e.strerror or e}") from None
    return target


def reset_to_starter(puzzle: Puzzle) -> tuple[Path, Path | None]:
    """Replace the player's file with the starter, keeping the old one as ``<file>.bak-<time>``.

    Returns (the file, the backup or None when there was nothing to keep).
    """
    target = workspace_path(puzzle)
    backup = None
    if target.exists():
        backup = sibling_name(target, "bak")
        try:
            os.replace(target, backup)
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
