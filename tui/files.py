"""Reading and writing the player's files: atomic writes, and a guard against clobbering outside edits."""

from __future__ import annotations

from pathlib import Path

from puzzles.files import sibling_name, write_atomic

__all__ = ["journal_path", "keep_copy", "mtime", "read_text", "write_atomic"]


def journal_path(path: Path) -> Path:
    """Where the editor's text goes at every change until it is saved: ``.<name>.typing`` beside ``path``."""
    path = Path(path)
    return path.with_name(f".{path.name}.typing")


def read_text(path: Path) -> str:
    return Path(path).read_text(encoding="utf-8")


def mtime(path: Path) -> float | None:
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return None


def keep_copy(path: Path, text: str, why: str = "disk") -> Path:
    """Save ``text`` beside ``path`` as ``<name>.<why>-<time>`` (never overwriting) and return that path."""
    copy = sibling_name(Path(path), why)
    write_atomic(copy, text)
    return copy
