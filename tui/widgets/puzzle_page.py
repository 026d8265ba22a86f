"""A puzzle's page: its task (Markdown), constraints, star tiers, the player's stars, revealed hints and
whether the reference solution was seen."""

from __future__ import annotations

from textual.widgets import Markdown


def page_markdown(puzzle, stars: int, most: int, hints: list[str], file_name: str | None = None,
                  solution_seen: bool = False) -> str:
    """The Markdown text of a puzzle's page."""
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
    for tier in sorted(puzzle.stars, key=lambda s: s.stars):
        rules = "; ".join(r.description for r in tier.rules)
        out.append(f"- {'★' * tier.stars} {tier.description}" + (f" ({rules})" if rules else ""))
    out += ["", "## Hints", ""]
    if not puzzle.hints:
        out.append("This puzzle has no hints.")
    else:
        out += [f"{i}. {text}" for i, text in enumerate(hints, 1)]
        left = len(puzzle.hints) - len(hints)
        if left:
            out.append("")
            out.append(f"*{len(hints)} of {len(puzzle.hints)} revealed; press **h** for the next one.*")
        else:
            out.append("")
            out.append("*Every hint is revealed.*")
    if solution_seen:
        out += ["", "*You have seen the reference solution.*"]
    if puzzle.reading and puzzle.reading not in puzzle.description:
        out += ["", f"**Read more:** {puzzle.reading}"]
    return "\n".join(out)


class PuzzlePage(Markdown):
    """The Markdown page of the highlighted puzzle."""

    def show(self, puzzle, stars: int, most: int, hints: list[str], file_name: str | None = None,
             solution_seen: bool = False) -> None:
        self.puzzle = puzzle
        self.update(page_markdown(puzzle, stars, most, hints, file_name, solution_seen))
