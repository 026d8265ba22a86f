"""The app's own settings, kept beside the player's progress: the theme, the last puzzle, what was shown once.

Stored as ``tui.json`` in the workspace folder (``puzzles.workspace.home()``)::

    {"theme": "textual-light", "last_puzzle": "zip", "welcome_seen": true, "introductions_seen": [1, 2],
     "cursors": {"zip": [11, 4]}}

Progress (stars, hints, revealed solutions) belongs to ``puzzles.progress``; this file only holds how the app
looks and where the player left off. Writes are atomic; a missing or unreadable file gives the defaults (an
unreadable one is left as it is and not overwritten), and a field of the wrong type falls back to its default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from puzzles import workspace
from puzzles.files import write_atomic

FILE_NAME = "tui.json"


@dataclass
class Settings:
    path: Path
    theme: str = ""                       # a Textual theme name; "" is the app's default
    last_puzzle: str = ""                 # slug of the puzzle open last
    welcome_seen: bool = False
    introductions_seen: list[int] = field(default_factory=list)   # chapters whose introduction was shown
    cursors: dict[str, list[int]] = field(default_factory=dict)   # slug -> [row, column] of the editor's cursor
    writable: bool = True

    def to_dict(self) -> dict:
        return {"theme": self.theme, "last_puzzle": self.last_puzzle, "welcome_seen": self.welcome_seen,
                "introductions_seen": sorted(set(self.introductions_seen)), "cursors": self.cursors}

    def save(self) -> bool:
        """Write atomically; False when the file cannot (or must not) be written."""
        if not self.writable:
            return False
        try:
            write_atomic(self.path, json.dumps(self.to_dict(), indent=2) + "\n")
        except OSError:
            return False
        return True

    def update(self, **changes) -> bool:
        """Change fields and save."""
        for name, value in changes.items():
            setattr(self, name, value)
        return self.save()


def settings_path() -> Path:
    return workspace.home() / FILE_NAME


def load_settings(path: Path | None = None) -> Settings:
    path = Path(path) if path is not None else settings_path()
    settings = Settings(path=path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return settings
    except (OSError, ValueError):
        settings.writable = False          # keep a file we cannot read; the app runs on the defaults
        return settings
    if not isinstance(data, dict):
        settings.writable = False
        return settings
    for name, kind in (("theme", str), ("last_puzzle", str), ("welcome_seen", bool)):
        if isinstance(data.get(name), kind):
            setattr(settings, name, data[name])
    cursors = data.get("cursors")
    if isinstance(cursors, dict):
        settings.cursors = {slug: [int(v) for v in at] for slug, at in cursors.items()
                            if isinstance(slug, str) and isinstance(at, list) and len(at) == 2
                            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in at)}
    seen = data.get("introductions_seen")
    if isinstance(seen, list):
        settings.introductions_seen = [n for n in seen if isinstance(n, int) and not isinstance(n, bool)]
    return settings
