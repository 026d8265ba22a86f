"""Visualiser (c): coalescing — per global access, the 32-byte sectors moved against the ideal."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .. import breakdown
from ..heat import bar
from .report_view import ReportView, not_recorded, with_code

M = "l1tex__t_{what}_pipe_lsu_mem_global_op_{op}.sum"


class CoalescingView(ReportView):
    title = "Coalescing"

    def draw(self):
        report = self.report
        metrics = report.metrics or {}
        parts = []
        if M.format(what="sectors", op="ld") not in metrics:
            return not_recorded("Memory traffic", "The launch ran without instrumentation.")
        totals = Text()
        for op, word in (("ld", "loads"), ("st", "stores"), ("atom", "atomics"), ("red", "atomics (no result)")):
            req = int(metrics.get(M.format(what="requests", op=op), 0))
            if not req:
                continue
            sectors = int(metrics.get(M.format(what="sectors", op=op), 0))
            ideal = int(metrics.get(f"gpusim__ideal_sectors_global_{op}", 0))
            totals.append(f"{word:<8}", style="bold")
            totals.append(f" {req} requests, {sectors} sectors moved")
            if ideal:
                totals.append(f", ideal {ideal}  ")
                totals.append(bar(ideal / sectors if sectors else 1.0, 16))
                totals.append(f" {100 * ideal / sectors:.0f}%" if sectors else "")
            totals.append("\n")
        if not totals.plain:
            totals.append("This launch made no global loads or stores.\n", style="dim")
        parts.append(Text("Whole launch", style="bold underline"))
        parts.append(totals)
        counts = getattr(report, "counts", None)
        per_array = getattr(counts, "coalescing", None) if counts is not None else None
        if per_array:
            table = Table(box=None, pad_edge=False, header_style="bold dim")
            table.add_column("array")
            table.add_column("bytes used", justify="right")
            table.add_column("bytes moved", justify="right")
            table.add_column("used of moved")
            for name, row in per_array.items():
                eff = float(row.get("efficiency", 1.0))
                table.add_row(name, f"{int(row.get('requested_bytes', 0)):,}", f"{int(row.get('moved_bytes', 0)):,}",
                              Text.assemble(bar(eff, 16), f" {eff * 100:.0f}%"))
            parts.append(table)
        rows = self.memo("global", lambda: breakdown.by_line(report, "global"))
        parts.append(Text("\nPer access (one row per source line, array and kind; the whole launch)",
                          style="bold underline"))
        if rows is None:
            parts.append(not_recorded("The per-access breakdown", "It comes with the launch's access counts, "
                                      "which this launch did not record."))
        elif not rows:
            parts.append(Text("This launch made no global access.", style="dim"))
        else:
            table = Table(box=None, pad_edge=False, header_style="bold dim")
            for name, justify in (("line", "right"), ("access", "left"), ("requests", "right"),
                                  ("sectors", "right"), ("ideal", "right"), ("ideal of moved", "left"),
                                  ("used of moved", "right")):
                table.add_column(name, justify=justify, no_wrap=True)
            parts.append(with_code(table, [
                ([str(row.lineno), f"{breakdown.KIND_WORDS[row.kind]} {row.array}", str(row.requests),
                  str(row.sectors), str(row.ideal_sectors),
                  Text.assemble(bar(row.efficiency, 12), f" {row.efficiency * 100:3.0f}%"), f"{row.used * 100:.0f}%"],
                 row.lineno, row.code) for row in rows], self.draw_width))
        parts.append(Text("\nA warp's load or store moves every 32-byte sector its threads touch. Ideal: the "
                          "fewest sectors that hold the same bytes — neighbouring threads reading neighbouring "
                          "elements get there. \"Used of moved\" also counts the unused rest of partly used "
                          "sectors, so a tiny array stays below 100% even when its accesses are ideal.",
                          style="dim"))
        return Group(*parts)
