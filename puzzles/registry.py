"""The registry: every puzzle of the game, found by scanning ``puzzles/chNN_<chapter>/pNN_<slug>.py``.

Each puzzle module defines ``PUZZLE = Puzzle(...)``. Discovery imports every such module once, checks that the
puzzle agrees with its file name (``pNN`` is its number, ``chNN`` its chapter) and that no two puzzles share a
slug or a number, and sorts them by number. A broken puzzle module is an authoring bug: ``all_puzzles()``
raises ``RegistryError`` naming every problem at once, so it cannot go unnoticed.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import re
from pathlib import Path

from .model import Puzzle

PACKAGE_DIR = Path(__file__).resolve().parent
_CHAPTER_DIR = re.compile(r"^ch(\d+)(?:_\w+)?$")
_PUZZLE_FILE = re.compile(r"^p(\d+)_(\w+)\.py$")


class RegistryError(Exception):
    """The puzzle modules are inconsistent: a module fails to import, or two puzzles collide."""


class UnknownPuzzle(RegistryError, LookupError):
    """No puzzle has the slug or number asked for."""


def discover(package_dir: Path = PACKAGE_DIR, package: str = "puzzles") -> tuple[list[Puzzle], list[str]]:
    """Import every ``<package>/ch*/p*.py`` module; return (puzzles sorted by number, problems found)."""
    found: list[tuple[Puzzle, str]] = []
    problems: list[str] = []
    for chapter_dir in sorted(p for p in package_dir.glob("ch*") if p.is_dir()):
        chapter_match = _CHAPTER_DIR.match(chapter_dir.name)
        if not chapter_match:
            continue
        for file in sorted(chapter_dir.glob("p*.py")):
            file_match = _PUZZLE_FILE.match(file.name)
            if not file_match:
                continue
            where = f"{chapter_dir.name}/{file.name}"
            puzzle = _load_module(f"{package}.{chapter_dir.name}.{file.stem}", where, problems)
            if puzzle is None:
                continue
            if puzzle.number != int(file_match.group(1)):
                problems.append(f"{where}: the file says puzzle {int(file_match.group(1))} but "
                                f"PUZZLE.number is {puzzle.number}")
            if puzzle.chapter != int(chapter_match.group(1)):
                problems.append(f"{where}: the folder says chapter {int(chapter_match.group(1))} but "
                                f"PUZZLE.chapter is {puzzle.chapter}")
            found.append((puzzle, where))
    problems.extend(_duplicates(found))
    return sorted((p for p, _ in found), key=lambda p: p.number), problems


def _load_module(name: str, where: str, problems: list[str]) -> Puzzle | None:
    try:
        module = importlib.import_module(name)
    except Exception as e:  # an authoring bug in a puzzle module: report it, keep scanning
        problems.append(f"{where}: importing it failed: {type(e).__name__}: {e}")
        return None
    puzzle = getattr(module, "PUZZLE", None)
    if not isinstance(puzzle, Puzzle):
        problems.append(f"{where}: defines no `PUZZLE = Puzzle(...)`")
        return None
    return puzzle


def _duplicates(found: list[tuple[Puzzle, str]]) -> list[str]:
    problems = []
    for label, key in (("slug", lambda p: p.slug), ("number", lambda p: p.number)):
        seen: dict[object, str] = {}
        for puzzle, where in found:
            k = key(puzzle)
            if k in seen:
                problems.append(f"{where}: {label} {k!r} is already used by {seen[k]}")
            else:
                seen[k] = where
    return problems


@functools.lru_cache(maxsize=1)
def _registry() -> tuple[Puzzle, ...]:
    puzzles, problems = discover()
    if problems:
        raise RegistryError("the puzzle modules have problems:\n" + "\n".join(f"  - {p}" for p in problems))
    return tuple(puzzles)


def all_puzzles() -> list[Puzzle]:
    """Every puzzle, sorted by number. Raises ``RegistryError`` if any puzzle module is broken."""
    return list(_registry())


def refresh() -> None:
    """Forget the discovered puzzles, so the next call scans the modules again."""
    _registry.cache_clear()


def get(key: str | int) -> Puzzle:
    """The puzzle with this number (``3``, ``"3"``, ``"03"``, ``"p03"``) or slug (``"map"``, ``"a_b"``).

    Raises ``UnknownPuzzle`` with the nearest slugs when nothing matches.
    """
    puzzles = all_puzzles()
    text = str(key).strip().lower()
    number = text[1:] if text.startswith("p") and text[1:].isdigit() else text
    if number.isdigit():
        for puzzle in puzzles:
            if puzzle.number == int(number):
                return puzzle
        span = f"they are numbered {puzzles[0].number}-{puzzles[-1].number}" if puzzles else "none exist yet"
        raise UnknownPuzzle(f"there is no puzzle {int(number)}; {span}")
    slug = text.replace("_", "-")
    for puzzle in puzzles:
        if puzzle.slug == slug:
            return puzzle
    raise UnknownPuzzle(_unknown_message(str(key), puzzles))


def _unknown_message(key: str, puzzles: list[Puzzle]) -> str:
    slugs = [p.slug for p in puzzles]
    near = difflib.get_close_matches(key.lower().replace("_", "-"), slugs, n=3, cutoff=0.5)
    near += [s for s in slugs if key.lower() in s and s not in near][: 3 - len(near)]
    message = f"there is no puzzle called {key!r}"
    if near:
        message += "; did you mean " + " or ".join(repr(s) for s in near) + "?"
    return message + " (`gpu-puzzles list` shows them all)"


def chapters() -> dict[int, str]:
    """Chapter number -> title, from each chapter package's ``NUMBER`` and ``TITLE``."""
    import importlib

    out: dict[int, str] = {}
    for folder in sorted(PACKAGE_DIR.glob("ch*")):
        if not (folder / "__init__.py").exists():
            continue
        mod = importlib.import_module(f"puzzles.{folder.name}")
        number, title = getattr(mod, "NUMBER", None), getattr(mod, "TITLE", None)
        if isinstance(number, int) and isinstance(title, str):
            out[number] = title
    return out


def chapter_introduction(number: int) -> str:
    """The Markdown introduction of chapter ``number`` (its package's ``INTRODUCTION``); "" when it has none."""
    for folder in sorted(PACKAGE_DIR.glob("ch*")):
        match = _CHAPTER_DIR.match(folder.name)
        if not match or int(match.group(1)) != number or not (folder / "__init__.py").exists():
            continue
        text = getattr(importlib.import_module(f"puzzles.{folder.name}"), "INTRODUCTION", "")
        return text.strip() if isinstance(text, str) else ""
    return ""
