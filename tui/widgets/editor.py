"""The solution editor: a Python ``TextArea`` on the player's file that knows when it has unsaved work."""

from __future__ import annotations

from pathlib import Path

from textual.reactive import var
from textual.widgets import TextArea
from textual.widgets.text_area import Selection

from .. import files


def python_language() -> str | None:
    """"python" when tree-sitter's Python grammar is installed (highlighting), else None (plain text)."""
    try:
        from textual._tree_sitter import get_language
    except ImportError:
        return None
    try:
        return "python" if get_language("python") is not None else None
    except Exception:
        return None


class SolutionEditor(TextArea):
    """Edits one file. ``dirty`` is True while the text differs from what is on disk."""

    dirty: var[bool] = var(False)
    """The text has changes that are not saved."""

    def __init__(self, path: Path, **kwargs):
        super().__init__("", language=python_language(), theme="monokai", soft_wrap=False,
                         tab_behavior="indent", show_line_numbers=True, **kwargs)
        self.path = Path(path)
        self.saved_text = ""
        self.saved_mtime: float | None = None
        self.highlighted_line: int | None = None

    def on_mount(self) -> None:
        self.load()

    def load(self) -> None:
        """(Re)read the file from disk; the text is then clean."""
        text = files.read_text(self.path)
        self.saved_text = text
        self.saved_mtime = files.mtime(self.path)
        self.load_text(text)
        self.dirty = False

    def changed_on_disk(self) -> bool:
        """Someone else (an outside editor, the CLI) wrote the file since it was loaded or saved."""
        now = files.mtime(self.path)
        if now is None or now == self.saved_mtime:
            return False
        try:
            return files.read_text(self.path) != self.saved_text
        except OSError:
            return False

    def save(self) -> Path | None:
        """Write the text atomically. If the file changed on disk meanwhile, keep that version beside it first.

        Returns the path of the kept copy, if one was made. Raises ``OSError``.
        """
        kept = None
        if self.changed_on_disk():
            kept = files.keep_copy(self.path, files.read_text(self.path), "outside-edit")
        text = self.text
        files.write_atomic(self.path, text)
        self.saved_text = text
        self.saved_mtime = files.mtime(self.path)
        self.dirty = False
        return kept

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.dirty = self.text != self.saved_text

    def watch_dirty(self, dirty: bool) -> None:
        self.set_class(dirty, "-dirty")

    def highlight_line(self, lineno: int) -> bool:
        """Select source line ``lineno`` (1-based) and scroll to it; False when the file has no such line."""
        if not 1 <= lineno <= self.document.line_count:
            return False
        self.highlighted_line = lineno
        row = lineno - 1
        # the whole line selected, the cursor at its start: the view does not scroll sideways
        self.selection = Selection(start=(row, len(self.document[row])), end=(row, 0))
        self.scroll_cursor_visible(center=True)
        return True
