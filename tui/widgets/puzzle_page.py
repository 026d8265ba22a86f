"""A puzzle's page (its task, constraints, star tiers, the player's stars, revealed hints, whether the
reference solution was seen) and a chapter's page (its introduction and its puzzles), in a scroller that
wraps text to the width it has and scrolls sideways for diagrams and formulas wider than that."""

from __future__ import annotations

from textual.containers import ScrollableContainer
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownFence


def star_line(tier) -> str:
    """``★★ description (rules)``; the rules are left out when they only repeat the description."""
    rules = "; ".join(r.description for r in tier.rules)
    same = not rules or rules.strip().lower() in tier.description.strip().lower()
    return f"- {'★' * tier.stars} {tier.description}" + ("" if same else f" ({rules})")


def page_markdown(puzzle, stars: int, most: int, hints: list[str], file_name: str | None = None,
                  solution_seen: bool = False, hint_key: str = "h") -> str:
    """The Markdown text of a puzzle's page; ``hint_key`` is the key that reveals a hint where it is shown."""
    out = [puzzle.description.strip(), ""]
    out.append(f"**Level** {'●' * puzzle.difficulty}{'○' * max(5 - puzzle.difficulty, 0)} · "
               f"**your stars** {'★' * stars}{'☆' * max(most - stars, 0)}")
    out.append("")
    out.append("## Write")
    out.append(", ".join(f"`{k}`" for k in puzzle.kernels) + (f" in `{file_name}`" if file_name else ""))
    if puzzle.constraints:
        out += ["", "## Constraints (every one must hold)", ""]
        out += [f"- {rule.description}" for rule in puzzle.constraints]
    out += ["", "## Stars", "", "- ★ a correct kernel that meets every constraint"]
    out += [star_line(tier) for tier in sorted(puzzle.stars, key=lambda s: s.stars)]
    out += ["", "## Hints", ""]
    if not puzzle.hints:
        out.append("This puzzle has no hints.")
    else:
        out += [f"{i}. {text}" for i, text in enumerate(hints, 1)]
        left = len(puzzle.hints) - len(hints)
        if left:
            out.append("")
            out.append(f"*{len(hints)} of {len(puzzle.hints)} revealed; press **{hint_key}** for the next one.*")
        else:
            out.append("")
            out.append("*Every hint is revealed.*")
    if solution_seen:
        out += ["", "*You have seen the reference solution.*"]
    if puzzle.reading and puzzle.reading not in puzzle.description:
        out += ["", f"**Read more:** {puzzle.reading}"]
    return "\n".join(out)


def chapter_markdown(number: int, title: str, introduction: str, puzzles: list, stars_of) -> str:
    """A chapter's page: its introduction, then its puzzles with the player's stars."""
    out = [introduction.strip() or f"# Chapter {number} · {title}", "", "## The puzzles", ""]
    for p in puzzles:
        got, most = stars_of(p.slug)
        out.append(f"- **{p.number}** {p.title} {'★' * got}{'☆' * max(most - got, 0)}")
    out += ["", "*Move down to a puzzle and press enter to open it.*"]
    return "\n".join(out)


class PuzzlePage(Markdown):
    """The Markdown page of a puzzle or a chapter."""

    def show(self, puzzle, stars: int, most: int, hints: list[str], file_name: str | None = None,
             solution_seen: bool = False, hint_key: str = "h") -> None:
        self.puzzle = puzzle
        self._set(page_markdown(puzzle, stars, most, hints, file_name, solution_seen, hint_key))

    def show_text(self, markdown: str) -> None:
        self.puzzle = None
        self._set(markdown)

    def _set(self, markdown: str) -> None:
        self.update(markdown)      # PageScroll fits the new blocks when the page says it is updated


class PageScroll(ScrollableContainer, can_focus=True):
    """Scrolls a page both ways: text wraps to the visible width, wider code blocks scroll sideways."""

    DEFAULT_CSS = """
    PageScroll { overflow-x: auto; overflow-y: auto; scrollbar-gutter: stable; }
    PageScroll > Markdown { width: auto; min-width: 100%; }
    PageScroll MarkdownFence { width: auto; overflow-x: hidden; }
    """

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit)

    def watch_show_vertical_scrollbar(self) -> None:
        """The text's width is the width beside the scrollbar (its gutter is kept, so this is for safety)."""
        self.call_after_refresh(self.fit)

    def on_markdown_table_of_contents_updated(self, event: Markdown.TableOfContentsUpdated) -> None:
        self.fit()

    def fit(self) -> None:
        """Wrap every block but the code blocks to the visible width."""
        for page in self.query_children(Markdown):
            padding = page.styles.padding
            width = max(self.scrollable_content_region.width - padding.left - padding.right, 20)
            for block in page.children:
                now = block.styles.max_width
                if not isinstance(block, MarkdownFence) and (now is None or now.cells != width):
                    block.styles.max_width = width
