"""Visualiser (d): shared-memory bank conflicts — wavefronts against requests per access, and the 32 banks
of the worst request."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .. import breakdown
from ..heat import bar
from .report_view import ReportView, not_recorded, with_code


def bank_strip(req: breakdown.BankRequest, width: int = 200) -> Text:
    """One cell per bank (32, as gpusim's bank model reports them): how many distinct words the request needs;
    in rows of as many banks as ``width`` columns hold (16 or 8 on a narrow screen, never a wrapped row)."""
    banks = range(len(req.words_per_bank))
    per_row = len(banks)
    while per_row > 8 and 7 + 3 * per_row > width:
        per_row //= 2
    out = Text()
    for start in range(0, len(banks), per_row):
        row = banks[start:start + per_row]
        out.append("bank   " if start == 0 else "\nbank   ", style="dim")
        for b in row:
            out.append(f"{b:>3}", style="dim")
        out.append("\nwords  ", style="dim")
        for b in row:
            n = req.words_per_bank[b]
            style = "dim" if n == 0 else "black on #8ab17d" if n == 1 else "black on #e9c46a" if n == 2 else \
                "white on #d62828"
            out.append(f"{n if n else '·':>3}", style=style)
    busiest = max(banks, key=lambda b: req.words_per_bank[b])
    out.append("\n")
    if req.words_per_bank[busiest] > 1:
        lanes = ", ".join(str(x) for x in req.lanes_per_bank[busiest])
        out.append(f"bank {busiest} serves {req.words_per_bank[busiest]} different words, one per wavefront; "
                   f"lanes {lanes} wait in line", style="")
    else:
        out.append("every bank serves at most one word: one wavefront, no conflict", style="green")
    return out


class BankView(ReportView):
    title = "Bank conflicts"

    def draw(self):
        report = self.report
        metrics = report.metrics or {}
        if "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum" not in metrics:
            return not_recorded("Shared-memory traffic", "The launch ran without instrumentation.")
        parts = [Text("Whole launch", style="bold underline")]
        totals = Text()
        for op, word in (("ld", "loads"), ("st", "stores")):
            req = int(metrics.get(f"smsp__sass_inst_executed_op_shared_{op}.sum", 0))
            wave = int(metrics.get(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum", 0))
            conf = int(metrics.get(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum", 0))
            if not req:
                continue
            totals.append(f"{word:<7}", style="bold")
            totals.append(f" {req} requests, {wave} wavefronts, ")
            totals.append(f"{conf} bank conflicts", style="bold red" if conf else "green")
            totals.append("  ")
            totals.append(bar((wave - conf) / wave if wave else 1.0, 16))
            totals.append("\n")
        if not totals.plain:
            parts.append(Text("This launch does not use shared memory.", style="dim"))
            return Group(*parts)
        parts.append(totals)
        rows = self.memo("shared", lambda: breakdown.by_line(report, "shared"))
        parts.append(Text("Per access (the whole launch)", style="bold underline"))
        if rows is None:
            parts.append(not_recorded("The per-access breakdown", "It comes with the launch's access counts, "
                                      "which this launch did not record."))
        else:
            table = Table(box=None, pad_edge=False, header_style="bold dim")
            for name, justify in (("line", "right"), ("access", "left"), ("requests", "right"),
                                  ("wavefronts", "right"), ("conflicts", "right"), ("", "left")):
                table.add_column(name, justify=justify, no_wrap=True)
            parts.append(with_code(table, [
                ([str(row.lineno), f"{breakdown.KIND_WORDS[row.kind]} {row.array}", str(row.requests),
                  str(row.wavefronts), Text(str(row.conflicts), style="bold red" if row.conflicts else "green"),
                  bar(row.efficiency, 12)], row.lineno, row.code)
                for row in rows if row.kind in ("ld", "st")], self.draw_width))
        worst = self.memo("worst", lambda: breakdown.worst_bank_request(report))
        parts.append(Text("\nThe worst request", style="bold underline"))
        if worst is None:
            parts.append(not_recorded("Single requests", "They are read from the phase trace."))
        else:
            bx, by, bz = report.launch.block_xyz(worst.block)
            head = Text()
            head.append(f"line {worst.lineno}", style="bold yellow")
            head.append(f"  {breakdown.KIND_WORDS[worst.kind]} of {worst.array} by warp {worst.warp} of block "
                        f"({bx}, {by}, {bz})  ")
            head.append(worst.code, style="italic")
            parts.append(head)
            parts.append(bank_strip(worst, self.draw_width))
            trace = breakdown.trace_of(report)
            if getattr(trace, "truncated", False):
                parts.append(Text(f"(the worst of the recorded blocks: {trace.summary()})", style="dim"))
            if worst.itemsize > 4:
                parts.append(Text(f"({worst.itemsize}-byte elements are served half a warp at a time; the strip "
                                  "counts words over the whole warp)", style="dim"))
        parts.append(Text("\nShared memory is 32 banks of 4-byte words. A warp's request takes one wavefront per "
                          "distinct word in its busiest bank; threads reading the same word share it.",
                          style="dim"))
        return Group(*parts)
