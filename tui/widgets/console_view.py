"""The console: what the kernels printed with ``print()`` in the last check, launch by launch.

gpusim keeps each launch's lines in ``LaunchReport.output`` (``PrintRecord(block, thread, lineno, text)``,
ordered by block, then thread, as a GPU's printf buffer is usually read) and counts the lines past its cap
in ``output_dropped``; the judge hands the reports back whole. At most ``MAX_LINES`` are drawn. What the file
itself printed on the host (at import) is shown too.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.widgets import Static

MAX_LINES = 2000
"""Lines of kernel output drawn in all (gpusim keeps at most its own cap per launch)."""


def coordinates(value, dims) -> str:
    """A block or thread index as short as the launch allows: ``3`` in a 1-D launch, ``(3,1)`` in a 2-D one."""
    if isinstance(value, (int, float)) or not hasattr(value, "__len__"):
        return str(value)
    used = max([1] + [k + 1 for k, d in enumerate(tuple(dims or ())) if d > 1])
    shown = tuple(int(v) for v in value)[:max(used, 1)]
    return str(shown[0]) if len(shown) == 1 else "(" + ",".join(str(v) for v in shown) + ")"


def console_renderable(result) -> Group:
    parts: list[Text] = []
    total = left_out = 0
    for case in getattr(result, "cases", []) or []:
        for number, report in enumerate(getattr(case, "reports", []) or [], 1):
            records = list(getattr(report, "output", None) or [])
            dropped = int(getattr(report, "output_dropped", 0) or 0)
            if not records and not dropped:
                continue
            if total >= MAX_LINES:
                left_out += len(records)
                continue
            shown = records[:MAX_LINES - total]
            left_out += len(records) - len(shown)
            total += len(shown)
            head = Text()
            head.append(f"case {case.name}", style="bold")
            head.append(f" · launch {number} ({report.launch.kernel})", style="dim")
            parts.append(head)
            grid, block = getattr(report.launch, "grid", None), getattr(report.launch, "block", None)
            labels = [(f"b{coordinates(r.block, grid)} t{coordinates(r.thread, block)}", f":{r.lineno}")
                      for r in shown]
            who_width = max(len(who) for who, _ in labels) if labels else 0
            line_width = max(len(where) for _, where in labels) if labels else 0
            for r, (who, where) in zip(shown, labels):      # one column for the text, whoever printed it
                line = Text()
                line.append(f"  {who:<{who_width}}", style="cyan")
                line.append(f" {where:<{line_width}}  ", style="dim")
                line.append(str(r.text))
                parts.append(line)
            if dropped:
                parts.append(Text(f"  … {dropped} more line{'s' if dropped != 1 else ''} not kept: a launch keeps "
                                  f"the first {len(records)}", style="yellow"))
            parts.append(Text(""))
    if left_out:
        parts.append(Text(f"… {left_out} more lines of later launches not shown (the console shows the first "
                          f"{MAX_LINES})", style="yellow"))
    if not total and not parts:
        parts.append(Text("The kernels printed nothing in the last check.", style="dim"))
        parts.append(Text("print() in a kernel works as on a GPU: print(\"i =\", i, a[i]) prints one line per "
                          "thread that runs it, shown here with its block and thread.", style="dim"))
    stdout = (getattr(result, "stdout", "") or "").rstrip("\n")
    if stdout:
        parts.append(Text("Your file printed (on the host)", style="bold underline"))
        lines = stdout.splitlines()
        parts += [Text(f"│ {line}", style="dim") for line in lines[:200]]
        if len(lines) > 200:
            parts.append(Text(f"│ … {len(lines) - 200} more lines", style="dim"))
    return Group(*parts)


class ConsoleView(Static):
    """The lines the last check's kernels printed."""

    def on_mount(self) -> None:
        self.update(Text("Nothing printed yet: ctrl+r runs your file; what its kernels print() shows here.",
                         style="dim"))

    def show(self, result) -> None:
        self.result = result
        self.update(console_renderable(result))
