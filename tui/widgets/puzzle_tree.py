"""The chapters → puzzles tree of the browser, with stars and difficulty on every puzzle."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from puzzles import registry

from ..messages import PuzzleHighlighted, PuzzleOpened


@functools.cache
def chapter_titles() -> dict[int, str]:
    """{chapter number: title} from the chapter packages; empty when they cannot be read."""
    try:
        return registry.chapters()
    except Exception:  # a broken chapter package costs its title, not the browser
        return {}


def chapter_title(number: int) -> str:
    return f"Chapter {number} · {chapter_titles().get(number, 'More puzzles')}"


def stars_text(earned: int, most: int) -> Text:
    return Text.assemble(("★" * earned, "bold yellow"), ("☆" * max(most - earned, 0), "dim"))


def level_text(difficulty: int) -> Text:
    return Text.assemble(("●" * difficulty, "magenta"), ("○" * max(5 - difficulty, 0), "dim"))


class PuzzleTree(Tree):
    """Chapters as branches, puzzles as leaves. Posts ``PuzzleHighlighted`` and ``PuzzleOpened``."""

    def __init__(self, puzzles: Sequence, stars: Callable[[str], tuple[int, int]], **kwargs):
        super().__init__("Puzzles", **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self._puzzles = list(puzzles)
        self._stars = stars
        self._leaves: dict[str, TreeNode] = {}

    def on_mount(self) -> None:
        chapters: dict[int, TreeNode] = {}
        for puzzle in self._puzzles:
            branch = chapters.get(puzzle.chapter)
            if branch is None:
                branch = chapters[puzzle.chapter] = self.root.add(chapter_title(puzzle.chapter), expand=True)
            self._leaves[puzzle.slug] = branch.add_leaf(self._label(puzzle), data=puzzle)
        self.refresh_stars()
        self.call_after_refresh(self._first)

    def _first(self) -> None:
        first = next(iter(self._leaves.values()), None)
        if first is not None and self.cursor_node is None or self.cursor_node is self.root:
            self.move_cursor(first)

    def _label(self, puzzle) -> Text:
        earned, most = self._stars(puzzle.slug)
        title = puzzle.title if len(puzzle.title) <= 24 else puzzle.title[:23] + "…"
        return Text.assemble((f"{puzzle.number:>2} ", "bold"), f"{title:<24} ", level_text(puzzle.difficulty),
                             " ", stars_text(earned, most))

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
                branch.set_label(Text.assemble((chapter_title(puzzles[0].chapter), "bold"),
                                               (f"  {got}/{most} ★", "yellow" if got else "dim")))

    def select_puzzle(self, slug: str) -> None:
        node = self._leaves.get(slug)
        if node is not None:
            self.move_cursor(node)

    @property
    def current(self):
        node = self.cursor_node
        return node.data if node is not None else None

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        if event.node.data is not None:
            self.post_message(PuzzleHighlighted(event.node.data))

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        if event.node.data is not None:
            event.stop()
            self.post_message(PuzzleOpened(event.node.data))
