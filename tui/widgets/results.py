"""The verdict of the last check: per-case pass/fail, the first wrong element, faults with their
coordinates, broken constraints, the stars and what the next star needs."""

from __future__ import annotations

from rich.console import Group
from rich.padding import Padding
from rich.text import Text
from textual.reactive import var
from textual.widgets import Static

from puzzles.render import failure_message, fault_summary

STATUS_MARK = {"pass": ("✓", "green"), "fail": ("✗", "red"), "not run": ("·", "dim")}
LABELS = {"mismatch": "wrong output", "constraint": "constraint", "compile": "cannot compile", "error": "error"}
"""The word a failure of each kind is shown under."""


def fault_line(failure) -> tuple[str, int] | None:
    """(file, line) a failure points at: a fault's line, or the file and line of a compile error."""
    fault = getattr(failure, "fault", None)
    if fault is not None and getattr(fault, "lineno", 0):
        return str(getattr(fault, "filename", "")), int(fault.lineno)
    if getattr(failure, "lineno", 0):
        return str(getattr(failure, "filename", "") or ""), int(failure.lineno)
    return None


def _xyz(v) -> str:
    return "(" + ", ".join(str(int(x)) for x in v) + ")" if v is not None else "?"


def _other_faults(failure, case=None) -> list[str]:
    """The launch's faults after the first, each with its line and element where the case's report has them
    (the failure itself names only their kinds: "and in the same launch: OutOfBounds" said too little)."""
    detail = failure.detail if isinstance(failure.detail, dict) else {}
    kinds = list(detail.get("faults", []))[1:]
    reports = list(getattr(case, "reports", None) or [])
    number = detail.get("launch")
    if not isinstance(number, int) or not 1 <= number <= len(reports):
        return kinds
    faults = list(getattr(reports[number - 1], "faults", None) or [])[1:]
    if len(faults) != len(kinds):
        return kinds
    named = []
    for f in faults:
        where = f"{type(f).__name__} at line {f.lineno}" if getattr(f, "lineno", 0) else type(f).__name__
        if getattr(f, "array", None) is not None and getattr(f, "index", None) is not None:
            where += f" ({f.array}[{', '.join(str(int(i)) for i in f.index)}])"
        named.append(where)
    return named


def _fault_text(failure, indent: str, case=None) -> Text:
    fault = failure.fault
    out = Text()
    out.append(f"{indent}{type(fault).__name__}: ", style="bold red")
    out.append(fault_summary(fault) + "\n")
    if fault.lineno:
        out.append(f"{indent}  line {fault.lineno}", style="bold yellow")
        if fault.source_line:
            out.append(f"   {fault.source_line.strip()}", style="italic")
        out.append("\n")
    if fault.block is not None:
        out.append(f"{indent}  block ", style="dim")
        out.append(_xyz(fault.block), style="bold cyan")
        out.append("  thread ", style="dim")
        out.append(_xyz(fault.thread), style="bold cyan")
        out.append("\n")
    if fault.array is not None and fault.index is not None:
        out.append(f"{indent}  array ", style="dim")
        out.append(fault.array, style="bold")
        out.append(" index ", style="dim")
        out.append("[" + ", ".join(str(int(i)) for i in fault.index) + "]", style="bold")
        out.append("\n")
    for d in fault.details:
        out.append(f"{indent}  {d}\n", style="dim")
    if getattr(fault, "count", 1) > 1:
        out.append(f"{indent}  ({fault.count} accesses at this line hit the same fault)\n", style="dim")
    others = _other_faults(failure, case)
    if others:
        out.append(f"{indent}  and in the same launch: {', '.join(others[:3])}"
                   f"{' and more' if len(others) > 3 else ''}\n", style="dim")
    out.rstrip()
    return out


def _message(failure, indent: str) -> Text:
    style = {"mismatch": "yellow", "constraint": "magenta", "compile": "red", "error": "red"}.get(failure.kind)
    label = LABELS.get(failure.kind, failure.kind)
    lines = failure_message(failure).splitlines() or [""]
    out = Text()
    out.append(f"{indent}{label}: ", style=f"bold {style}" if style else "bold")
    out.append(_without_label(failure, lines[0]) + "\n")
    for line in lines[1:]:
        out.append(f"{indent}  {line.strip()}\n", style="italic" if line.startswith("    ") else "")
    out.rstrip()
    return out


def _indented(renderable, by: int = 4) -> Padding:
    return Padding(renderable, (0, 0, 0, by))


def _without_label(failure, first: str) -> str:
    """A message's first line without the words its label already says ("constraint: not met (...)", not
    "constraint: constraint not met (...)")."""
    for said in ("wrong output ", "constraint "):
        if LABELS.get(failure.kind, "").startswith(said.strip()) and first.startswith(said):
            return first[len(said):]
    return first


def _one_line(failure) -> Text:
    """A failure's first line only (for cases after the first that fail the same way); it wraps, so the
    count of differing elements at its end is never cut off."""
    first = (failure_message(failure).splitlines() or [""])[0]
    label = LABELS.get(failure.kind, failure.kind)
    return Text(f"{label}: {_without_label(failure, first)}", style="dim")


def result_renderable(result, file_name: str = "", after_pass: str = "") -> Group:
    """The whole verdict as Rich text; ``after_pass`` (where to go next) is said under a pass."""
    parts: list[Text] = []
    head = Text()
    if result.passed:
        head.append(" PASS ", style="bold black on green")
        head.append("  ")
        head.append("★" * result.stars, style="bold yellow")
        head.append("☆" * max(result.max_stars - result.stars, 0), style="dim")
        head.append(f"  {result.stars} of {result.max_stars} stars")
    else:
        failed = sum(1 for c in result.cases if c.status == "fail")
        not_run = sum(1 for c in result.cases if c.status == "not run")
        head.append(" FAIL ", style="bold white on red")
        head.append(f"  {failed} of {len(result.cases)} test cases failed" if result.cases else "  nothing ran")
        if not_run:
            head.append(f", {not_run} not run (a case stopped the check)")
    parts.append(head)
    if result.next_star and (result.passed or result.stars < result.max_stars):
        parts.append(Text.assemble(("Next: ", "bold"), result.next_star))
    elif result.passed:
        parts.append(Text("Every star earned.", style="green"))
    if result.passed and after_pass:
        parts.append(Text(after_pass, style="bold green"))
    if result.cases:
        parts.append(Text.assemble(("cases drawn with seed ", "dim"), (str(result.seed), "bold"),
                                   (" · ctrl+l runs these same cases again", "dim")))
    in_cases = {id(f) for c in result.cases for f in c.failures}
    general = [f for f in result.failures if id(f) not in in_cases]
    if general:
        parts.append(Text(""))
        for failure in general:
            parts.append(_fault_text(failure, "") if failure.fault is not None else _message(failure, ""))
            parts.append(Text(""))
    if result.cases:
        parts.append(Text("\nTest cases", style="bold underline"))
    seen: dict[tuple, str] = {}
    kinds_shown: set[str] = set()
    for case in result.cases:
        mark, colour = STATUS_MARK.get(case.status, ("·", "dim"))
        line = Text.assemble((f"{mark} ", f"bold {colour}"), (case.name, colour if case.status != "pass" else ""))
        if case.status == "not run":
            line.append("  (not run)", style="dim")
        parts.append(line)
        full = False
        for failure in case.failures:
            fault = failure.fault
            if fault is not None:
                key = (type(fault).__name__, fault.lineno, fault.array)
                if key in seen:
                    parts.append(Text(f"    the same {type(fault).__name__} as in {seen[key]!r}", style="dim"))
                    continue
                seen[key] = case.name
                full = True
                parts.append(_indented(_fault_text(failure, "", case)))
            elif failure.kind == "constraint":
                rule = failure.detail.get("rule") if isinstance(failure.detail, dict) else None
                if ("constraint", rule) in seen:
                    continue
                seen[("constraint", rule)] = case.name
                full = True
                parts.append(_indented(_message(failure, "")))
            elif failure.kind in kinds_shown:
                parts.append(_indented(_one_line(failure)))
            else:
                kinds_shown.add(failure.kind)
                full = True
                parts.append(_indented(_message(failure, "")))
        if full and case.note:
            parts.append(_indented(Text(f"this case: {case.note}", style="dim italic")))
    for note in result.notes:
        parts.append(Text(f"\nNote: {note}", style="dim"))
    if result.stdout.strip():
        printed = result.stdout.rstrip("\n").splitlines()
        parts.append(Text("\nYour file printed", style="bold underline"))
        for line in printed[:30]:
            parts.append(Text(f"│ {line}", style="dim"))
        if len(printed) > 30:
            parts.append(Text(f"│ … {len(printed) - 30} more lines", style="dim"))
    printed = sum(len(getattr(r, "output", None) or []) for c in result.cases for r in c.reports)
    if printed:
        parts.append(Text(f"\nYour kernels printed {printed} line{'s' if printed != 1 else ''}: f8 shows them.",
                          style="bold"))
    if any(c.reports for c in result.cases):
        parts.append(Text("\nctrl+g shows the run: threads, barrier phases and values, coalescing, banks, "
                          "roofline, expected against got.", style="dim"))
    return Group(*parts)


class ResultsView(Static):
    """Shows "not run yet", "running…" or the last ``CheckResult``."""

    result = var(None, always_update=True)
    """The last CheckResult shown (None before the first check)."""
    after_pass = ""
    """Said under a pass: where to go next (set by the screen)."""

    def on_mount(self) -> None:
        if self.result is None:
            self.update(Text("Not checked yet. ctrl+r saves your file and runs every test case.", style="dim"))

    def watch_result(self, result) -> None:
        if result is not None:
            self.update(result_renderable(result, after_pass=self.after_pass))
            self.set_class(bool(result.passed), "-passed")
            self.set_class(not result.passed, "-failed")

    def show_running(self) -> None:
        self.update(Text("Running every test case on the simulator…  esc or ctrl+c stops it.", style="bold"))

    def show_cancelled(self, had_result: bool) -> None:
        text = Text("The check was stopped before it finished; nothing was recorded.", style="bold yellow")
        text.append("\nctrl+r runs it again.", style="dim")
        self.update(text)
