"""The solution editor: a Python ``TextArea`` on the player's file.

It knows when it has unsaved work (``dirty``), keeps the indentation on Enter (one level more after a line
ending in ``:``, one less after ``return``/``pass``/``break``/``continue``/``raise``), takes a whole indent
level back with Backspace in the leading spaces, marks a fault's line without selecting it (so the next
keystroke types, it does not replace the line), and follows the app's theme, dark or light.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.reactive import var
from textual.strip import Strip
from textual.widgets import TextArea

from .. import files

DEDENT_AFTER = ("return", "pass", "break", "continue", "raise")
DARK_THEME, LIGHT_THEME = "monokai", "github_light"


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


def editor_theme(dark: bool) -> str:
    return DARK_THEME if dark else LIGHT_THEME


def new_line_indent(line: str, column: int, width: int = 4) -> str:
    """The indentation for a line started by Enter at ``column`` of ``line``."""
    before = line[:column]
    indent = before[: len(before) - len(before.lstrip(" \t"))]
    code = before.split("#", 1)[0].rstrip()
    if code.endswith(":"):
        return indent + " " * width
    words = code.strip().split()
    if words and words[0] in DEDENT_AFTER:
        return indent[:-width] if len(indent) >= width else ""
    return indent


class SolutionEditor(TextArea, inherit_bindings=False):
    """Edits one file. ``dirty`` is True while the text differs from what is on disk.

    TextArea's own keys, except f6 and f7 (select line, select all): the workspace's pane keys.
    """

    BINDINGS = list({key: replace(b, key=key) for cls in reversed(TextArea.__mro__)
                     for b in cls.__dict__.get("BINDINGS", []) for key in b.key.split(",")
                     if key not in ("f6", "f7")}.values())

    COMPONENT_CLASSES = {"solution-editor--fault-line"}
    DEFAULT_CSS = """
    SolutionEditor > .solution-editor--fault-line { background: $error 30%; }
    """

    dirty: var[bool] = var(False)
    """The text has changes that are not saved."""
    fault_line: var[int | None] = var(None)
    """The 1-based line marked as a fault's (None: no mark). Cleared when that line is edited."""

    def __init__(self, path: Path, **kwargs):
        super().__init__("", language=python_language(), theme=DARK_THEME, soft_wrap=False,
                         tab_behavior="indent", show_line_numbers=True, **kwargs)
        self.path = Path(path)
        self.saved_text = ""
        self.saved_mtime: float | None = None
        self._marked_text: str | None = None

    def on_mount(self) -> None:
        self.load()
        self.follow_theme()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.follow_theme())

    def follow_theme(self) -> None:
        self.theme = editor_theme(self.app.current_theme.dark)

    # the file --------------------------------------------------------------------------------------------

    def load(self) -> None:
        """(Re)read the file from disk; the text is then clean. The cursor stays where it was (inside the new
        text), so the next key typed after an outside change goes where the player was typing."""
        text = files.read_text(self.path)
        row, column = self.cursor_location
        self.saved_text = text
        self.saved_mtime = files.mtime(self.path)
        self.load_text(text)
        row = min(row, self.document.line_count - 1)
        self.move_cursor((row, min(column, len(self.document[row]))))
        self.fault_line = None
        self.dirty = False

    def changed_on_disk(self) -> bool:
        """Someone else (an outside editor, the CLI) wrote the file since it was loaded or saved."""
        now = files.mtime(self.path)
        if now is None or now == self.saved_mtime:
            return False
        try:
            return files.read_text(self.path) != self.saved_text
        except (OSError, UnicodeDecodeError):
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
        if self.fault_line is not None:
            row = self.fault_line - 1
            if row >= self.document.line_count or self.document[row] != self._marked_text:
                self.fault_line = None

    def on_resize(self) -> None:
        """Shown again (a narrow screen switches panes): a cursor that fits needs no sideways scroll (one
        placed while the editor had no width scrolled the text by its column)."""
        if 0 <= self.cursor_location[1] < self.scrollable_content_region.width - 8:
            self.call_after_refresh(self.scroll_to, x=0, animate=False)

    def watch_dirty(self, dirty: bool) -> None:
        self.set_class(dirty, "-dirty")

    # a fault's line --------------------------------------------------------------------------------------

    def highlight_line(self, lineno: int) -> bool:
        """Mark source line ``lineno`` (1-based), put the cursor at its first character and scroll to it.

        Nothing is selected: typing goes on where the cursor is. False when the file has no such line.
        """
        if not 1 <= lineno <= self.document.line_count:
            return False
        row = lineno - 1
        line = self.document[row]
        self._marked_text = line
        self.fault_line = lineno
        self.move_cursor((row, len(line) - len(line.lstrip())), center=True)
        self.scroll_to(x=0, animate=False)
        return True

    @property
    def highlighted_line(self) -> int | None:
        return self.fault_line

    def watch_fault_line(self) -> None:
        self.refresh()

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if self.fault_line is not None and self.scroll_offset.y + y == self.fault_line - 1:
            style = self.get_component_rich_style("solution-editor--fault-line", partial=True)
            if style.bgcolor is not None:
                strip = Strip(Segment.apply_style(list(strip), post_style=Style(bgcolor=style.bgcolor)),
                              strip.cell_length)
        return strip

    # typing Python -----------------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        """Every key the editor acts on is handled here, in the order typed.

        (Textual runs a widget's key bindings only after the key has bubbled up to the app, so a burst of
        keys could be applied out of order: Enter before the arrows typed ahead of it.)
        """
        action = _KEY_ACTIONS.get(event.key)
        if action is not None:
            event.stop()
            event.prevent_default()
            await self.run_action(action)
            return
        if event.key == "enter" and not self.read_only:
            event.stop()
            event.prevent_default()
            start, end = self.selection
            top = min(start, end)
            indent = new_line_indent(self.document[top[0]], top[1], self.indent_width)
            self._replace_via_keyboard("\n" + indent, start, end)
            return
        await super()._on_key(event)

    def action_delete_left(self) -> None:
        """Backspace; in the leading spaces of a line it goes back to the previous indent level."""
        row, col = self.cursor_location
        before = self.document[row][:col] if self.selection.is_empty else "x"
        if col and before.strip(" ") == "" and not self.read_only:
            back = (col - 1) % self.indent_width + 1
            self._delete_via_keyboard((row, col - back), (row, col))
            return
        super().action_delete_left()


_KEY_ACTIONS = {b.key: b.action for b in SolutionEditor.BINDINGS}
