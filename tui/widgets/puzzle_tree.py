"""The chapters → puzzles tree of the browser: stars and difficulty on every puzzle, ◆ where the reference
solution was seen, each chapter's stars; titles are shortened to the width the tree has."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from puzzles import registry

from ..messages import ChapterHighlighted, PuzzleHighlighted, PuzzleOpened

SEEN_MARK = "◆"


@functools.cache
def chapter_titles() -> dict[int, str]:
    """{chapter number: title} from the chapter packages; empty when they cannot be read."""
    try:
        return registry.chapters()
    except Exception:  # a broken chapter package costs its title, not the browser
        return {}


@functools.cache
def chapter_introduction(number: int) -> str:
    try:
        return registry.chapter_introduction(number)
    except Exception:  # a broken chapter package costs its introduction, not the browser
        return ""


def chapter_title(number: int) -> str:
    return f"Chapter {number} · {chapter_titles().get(number, 'More puzzles')}"


def stars_text(earned: int, most: int) -> Text:
    return Text.assemble(("★" * earned, "bold yellow"), ("☆" * max(most - earned, 0), "dim"))


def level_text(difficulty: int) -> Text:
    return Text.assemble(("●" * difficulty, "magenta"), ("○" * max(5 - difficulty, 0), "dim"))


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


class PuzzleTree(Tree):
    """Chapters as branches, puzzles as leaves. Posts ``PuzzleHighlighted``, ``ChapterHighlighted`` and
    ``PuzzleOpened``."""

    def __init__(self, puzzles: Sequence, stars: Callable[[str], tuple[int, int]],
                 seen: Callable[[str], bool] = lambda slug: False, **kwargs):
        super().__init__("Puzzles", **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self._puzzles = list(puzzles)
        self._stars = stars
        self._seen = seen
        self._leaves: dict[str, TreeNode] = {}
        self._title_width = 24
        self._chapter_width = 60

    def on_mount(self) -> None:
        chapters: dict[int, TreeNode] = {}
        for puzzle in self._puzzles:
            branch = chapters.get(puzzle.chapter)
            if branch is None:
                branch = chapters[puzzle.chapter] = self.root.add(chapter_title(puzzle.chapter),
                                                                   data=puzzle.chapter, expand=True)
            self._leaves[puzzle.slug] = branch.add_leaf(self._label(puzzle), data=puzzle)
        self.refresh_stars()
        self.call_after_refresh(self._first)

    def on_resize(self) -> None:
        # number, title, level, stars, mark: the title gets what the rest leaves
        width = max(8, min(28, self.scrollable_content_region.width - 4 - 3 - 6 - 4 - 3))
        chapter_width = max(20, self.scrollable_content_region.width - 3)    # after the ▼ and a margin
        if (width, chapter_width) != (self._title_width, self._chapter_width):
            self._title_width, self._chapter_width = width, chapter_width
            self.refresh_stars()

    def _first(self) -> None:
        first = next(iter(self._leaves.values()), None)
        if first is not None and (self.cursor_node is None or self.cursor_node is self.root):
            self.move_cursor(first)

    def _label(self, puzzle) -> Text:
        earned, most = self._stars(puzzle.slug)
        title = shorten(puzzle.title, self._title_width)
        label = Text.assemble((f"{puzzle.number:>2} ", "bold"), f"{title:<{self._title_width}} ",
                              level_text(puzzle.difficulty), " ", stars_text(earned, most))
        if self._seen(puzzle.slug):
            label.append(f" {SEEN_MARK}", style="magenta")
        return label

    def refresh_stars(self) -> None:
        """Relabel every puzzle (after a check or on returning to the browser)."""
        for puzzle in self._puzzles:
            node = self._leaves.get(puzzle.slug)
            if node is not None:
                node.set_label(self._label(puzzle))
        for branch in self.root.children:
            puzzles = [leaf.data for leaf in branch.children if leaf.data is not None]
            if puzzles:
                got = sum(self._stars(p.slug)[0] for p in puzzles)
                most = sum(self._stars(p.slug)[1] for p in puzzles)
                count = f"  {got}/{most} ★"
                room = max(12, self._chapter_width - len(count))
                branch.set_label(Text.assemble((shorten(chapter_title(puzzles[0].chapter), room), "bold"),
                                               (count, "yellow" if got else "dim")))

    def select_puzzle(self, slug: str) -> None:
        node = self._leaves.get(slug)
        if node is not None:
            self.move_cursor(node)

    @property
    def current(self):
        node = self.cursor_node
        return node.data if node is not None and not isinstance(node.data, int) else None

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        data = event.node.data
        if isinstance(data, int):
            self.post_message(ChapterHighlighted(data))
        elif data is not None:
            self.post_message(PuzzleHighlighted(data))

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        data = event.node.data
        if data is not None and not isinstance(data, int):
            event.stop()
            self.post_message(PuzzleOpened(data))
