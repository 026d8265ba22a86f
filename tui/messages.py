"""Messages that travel between the app's screens and widgets (widget-local ones live in their widget)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


@dataclass
class PuzzleHighlighted(Message):
    """The browser's cursor moved onto a puzzle."""

    puzzle: Any        # puzzles.model.Puzzle


@dataclass
class PuzzleOpened(Message):
    """The player asked to work on a puzzle."""

    puzzle: Any


@dataclass
class ChapterHighlighted(Message):
    """The browser's cursor moved onto a chapter."""

    chapter: int


@dataclass
class CheckFinished(Message):
    """A check of the player's file ended (posted from the worker thread)."""

    puzzle: Any
    result: Any        # puzzles.results.CheckResult
    run: Any = None    # the checking.CheckRun it answers (None: not from the runner)


@dataclass
class HintRevealed(Message):
    """A hint was revealed and recorded in the progress file."""

    puzzle: Any
    number: int
    text: str
