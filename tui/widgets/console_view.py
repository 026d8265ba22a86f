"""The console: what the kernels printed with ``print()`` in the last check, launch by launch.

gpusim keeps each launch's lines in ``LaunchReport.output`` (``PrintRecord(block, thread, lineno, text)``,
ordered by block, then thread, as a GPU's printf buffer is usually read) and counts the lines past its cap
in ``output_dropped``. What the file itself printed on the host (at import) is shown too.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.widgets import Static


def console_renderable(result) -> Group:
    parts: list[Text] = []
    total = 0
    for case in getattr(result, "cases", []) or []:
        for number, report in enumerate(getattr(case, "reports", []) or [], 1):
            records = list(getattr(report, "output", None) or [])
            dropped = int(getattr(report, "output_dropped", 0) or 0)
            if not records and not dropped:
                continue
            total += len(records)
            head = Text()
            head.append(f"case {case.name}", style="bold")
            head.append(f" · launch {number} ({report.launch.kernel})", style="dim")
            parts.append(head)
            for r in records:
                line = Text()
                line.append(f"  b{r.block} t{r.thread}", style="cyan")
                line.append(f" :{r.lineno}  ", style="dim")
                line.append(str(r.text))
                parts.append(line)
            if dropped:
                parts.append(Text(f"  … {dropped} more line{'s' if dropped != 1 else ''} not kept: a launch keeps "
                                  f"the first {len(records)}", style="yellow"))
            parts.append(Text(""))
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
