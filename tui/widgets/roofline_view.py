"""Visualiser (e): the roofline — the launch's arithmetic intensity against a GPU's ridge point.

Attainable FLOP/s = min(peak FLOP/s, intensity × DRAM bandwidth). Left of the ridge point a kernel is
memory-bound; right of it, compute-bound. The numbers and the GPU table come from ``gpusim.roofline``.
"""

from __future__ import annotations

import math

from rich.text import Text
from textual.binding import Binding
from textual.reactive import var

from ..realistic import REALISTIC_N, at_realistic_size, float64_note
from .report_view import ReportView, not_recorded

CHART_W = 56
CHART_H = 12


def gpu_names() -> list[str]:
    try:
        from gpusim.roofline import GPUS
    except Exception:
        return []
    return list(GPUS)


def _si(value: float, unit: str) -> str:
    for prefix, size in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _time(s: float) -> str:
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.3g} µs"
    return f"{s * 1e9:.3g} ns"


def chart(intensity: float, ridge: float, bandwidth: float) -> Text:
    """A log-log roofline with the kernel's point on it."""
    peak = ridge * bandwidth
    finite = intensity if math.isfinite(intensity) and intensity > 0 else None
    lo = math.floor(math.log10(min(ridge, finite or ridge) / 10))
    hi = math.ceil(math.log10(max(ridge, finite or ridge) * 10))
    xs = [10 ** (lo + (hi - lo) * c / (CHART_W - 1)) for c in range(CHART_W)]
    ylo, yhi = math.log10(bandwidth * 10 ** lo), math.log10(peak) + 0.15

    def row_of(flops: float) -> int:
        f = (math.log10(flops) - ylo) / (yhi - ylo)
        return max(0, min(CHART_H - 1, CHART_H - 1 - round(f * (CHART_H - 1))))

    grid = [[" "] * CHART_W for _ in range(CHART_H)]
    styles = [[""] * CHART_W for _ in range(CHART_H)]
    ridge_col = round((math.log10(ridge) - lo) / (hi - lo) * (CHART_W - 1))
    for r in range(CHART_H):
        grid[r][ridge_col], styles[r][ridge_col] = "┊", "dim red"
    for c, x in enumerate(xs):
        r = row_of(min(peak, x * bandwidth))
        grid[r][c], styles[r][c] = "•", "cyan"
    if intensity <= 0:
        kc = 0
    elif not math.isfinite(intensity):
        kc = CHART_W - 1
    else:
        kc = round((math.log10(intensity) - lo) / (hi - lo) * (CHART_W - 1))
    kc = max(0, min(CHART_W - 1, kc))
    kr = row_of(min(peak, xs[kc] * bandwidth))
    grid[kr][kc], styles[kr][kc] = "◆", "bold yellow"
    out = Text()
    peak_row = row_of(peak)
    for r in range(CHART_H):
        label = _si(peak, "FLOP/s") if r == peak_row else _si(10 ** ylo, "FLOP/s") if r == CHART_H - 1 else ""
        out.append(f"{label:>14} │", style="dim")
        for c in range(CHART_W):
            out.append(grid[r][c], style=styles[r][c])
        out.append("\n")
    out.append(" " * 15 + "└" + "─" * CHART_W + "\n", style="dim")
    ticks = [" "] * (CHART_W + 8)
    for d in range(lo, hi + 1):
        c = round((d - lo) / (hi - lo) * (CHART_W - 1))
        for i, ch in enumerate(f"{10.0 ** d:g}"):
            ticks[c + i] = ch
    out.append(" " * 16 + "".join(ticks) + "\n", style="dim")
    out.append(" " * 16 + "arithmetic intensity (FLOP per DRAM byte, log scale)   ", style="dim")
    out.append("◆", style="bold yellow")
    out.append(" this launch  ", style="dim")
    out.append("┊", style="dim red")
    out.append(" ridge point", style="dim")
    return out


class RooflineView(ReportView):
    title = "Roofline"

    BINDINGS = [
        Binding("g", "gpu(1)", "Next GPU"),
        Binding("G", "gpu(-1)", "Prev GPU", show=False),
    ]

    gpu_index: var[int] = var(0)
    """Which GPU of ``gpusim.roofline.GPUS`` the estimate is for."""

    @property
    def gpu(self) -> str | None:
        names = gpu_names()
        return names[self.gpu_index % len(names)] if names else None

    def draw(self):
        gpu = self.gpu
        if gpu is None:
            return not_recorded("The GPU table", "gpusim.roofline is not available.")
        try:
            est = self.report.estimate(gpu)
        except (ValueError, KeyError) as e:
            return not_recorded("The roofline estimate", str(e))
        from gpusim.roofline import GPUS

        spec = GPUS[gpu]
        out = Text()
        out.append("GPU ", style="dim")
        out.append(" · ".join(f"[{n}]" if n == gpu else n for n in gpu_names()), style="bold")
        out.append(f"\n{gpu}: {_si(spec.bandwidth, 'B/s')} DRAM, "
                   + ", ".join(f"{dt} {_si(v, 'FLOP/s')}" for dt, v in spec.flops.items()) + "\n\n", style="dim")
        out.append(chart(est.arithmetic_intensity, est.ridge_point, spec.bandwidth))
        out.append("\n\n")
        ai = est.arithmetic_intensity
        ai_text = "∞" if not math.isfinite(ai) else f"{ai:.3g}"
        out.append("This launch  ", style="bold")
        out.append(f"{est.flops:,} FLOP over {est.bytes:,} bytes of DRAM traffic = {ai_text} FLOP/byte\n")
        out.append("Ridge point  ", style="bold")
        out.append(f"{est.ridge_point:.3g} FLOP/byte on the {gpu} for this mix of types\n")
        out.append("Verdict      ", style="bold")
        bound = Text(f"{est.bound}-bound", style="bold red" if est.bound == "memory" else "bold green")
        out.append(bound)
        if est.flops == 0:
            out.append(": no floating-point work at all, the time is all memory traffic")
        elif est.bound == "memory" and ai > 0:
            out.append(f": it needs {est.ridge_point / ai:.3g}× more FLOP per byte to reach the ridge")
        out.append("\n")
        out.append("Estimate     ", style="bold")
        out.append(f"~{_time(est.seconds)} = max(memory {_time(est.memory_seconds)}, compute "
                   f"{_time(est.compute_seconds)}) + {_time(est.overhead_seconds)} to launch\n")
        terms = [(k, v) for k, v in getattr(est, "parts", {}).items() if k != "launch" and v > 0]
        if terms:
            out.append("Limited by   ", style="bold")
            out.append(f"{est.limit}", style="bold")
            out.append(" (" + ", ".join(f"{k} {_time(v)}" for k, v in terms) + ")\n", style="dim")
        f64 = float64_note(self.report)
        if f64 is not None:
            count, total = f64
            out.append("\nfloat64  ", style="bold yellow")
            out.append(f"{count:,} of the {total:,} FLOPs ran in float64, though no array is float64. A Python "
                       "number in float32 arithmetic does that: `a[i] + 10` or `acc = 0.0` is float64 in numba, "
                       "on the GPU as here. So the float64 roof is used for them")
            f32 = spec.flops.get("float32", 0)
            ratio = f32 / spec.flops["float64"] if spec.flops.get("float64") else 0
            out.append(f" ({_si(spec.flops.get('float64', 0), 'FLOP/s')} on the {gpu}"
                       + (f", 1/{ratio:.0f} of float32" if ratio >= 1.5 else "") + "). ")
            out.append("numba.float32(10) and numba.float32(0) keep the work in float32.\n", style="italic")
        scaled = at_realistic_size(self.report, gpu)
        if scaled is not None:
            big = scaled.estimate
            out.append("\nAt n = 2^24  ", style="bold")
            out.append(f"~{_time(big.seconds)}, {big.bound}-bound (memory {_time(big.memory_seconds)}, compute "
                       f"{_time(big.compute_seconds)}, launch {_time(big.overhead_seconds)})\n")
            out.append(f"             the counted bytes and FLOPs × {scaled.factor:,.0f}, from n = {scaled.n:,} "
                       f"(the elements of {scaled.array}, the largest array) to {REALISTIC_N:,}: the same work "
                       f"per element (a matmul's FLOPs grow faster, so there it is a lower bound). Nothing was "
                       f"run at that size.\n", style="dim")
        if est.overhead_seconds > max(est.memory_seconds, est.compute_seconds):
            out.append("At puzzle sizes the launch itself costs more than the work: real kernels are "
                       "millions of elements.\n", style="dim")
        return out

    def action_gpu(self, step: int) -> None:
        names = gpu_names()
        if names:
            self.gpu_index = (self.gpu_index + step) % len(names)

    def watch_gpu_index(self) -> None:
        self.redraw()
