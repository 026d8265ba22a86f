"""Visualiser (e): the roofline — the launch's arithmetic intensity against a GPU's ridge point.

Attainable FLOP/s = min(peak FLOP/s, intensity × DRAM bandwidth). Left of the ridge point a kernel is
memory-bound; right of it, compute-bound. The numbers and the GPU table come from ``gpusim.roofline``.
"""

from __future__ import annotations

import math

from rich.text import Text
from textual.binding import Binding
from textual.reactive import var

from puzzles.at_scale import at_scale, target_size
from puzzles.precision import float64_work

from .report_view import ReportView, not_recorded

CHART_W = 56
MAX_PROMOTIONS = 8
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

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.puzzle = None       # the puzzle of the run: its benchmark size is where the estimate is scaled to
        self.float64_lines = None   # the judge's puzzles.precision.float64_lines for this launch, if it found them

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
        scaled = self.memo("target", lambda: target_size(self.puzzle)) if self.puzzle is not None else None
        scaled = at_scale(self.report, gpu, target=scaled) if scaled is not None else None
        f64 = float64_work(self.report)
        if f64 is not None:
            out.append(self._float64(f64, gpu, spec, (scaled.estimate if scaled is not None else est).bound))
        if scaled is not None:
            big = scaled.estimate
            out.append(f"\nAt {scaled.label}  ", style="bold")
            out.append(f"~{_time(big.seconds)}, {big.bound}-bound (memory {_time(big.memory_seconds)}, compute "
                       f"{_time(big.compute_seconds)}, launch {_time(big.overhead_seconds)})\n")
            out.append(f"the counted bytes and FLOPs × {scaled.factor:,.0f}, from n = {scaled.n:,} (the elements "
                       f"of {scaled.array}, the largest array) to {scaled.target:,}: the same work per element (a "
                       f"matmul's FLOPs grow faster, so there it is a lower bound). Nothing was run at that "
                       f"size.\n", style="dim")
            if scaled.why:
                out.append(f"Not larger: {scaled.why}\n", style="dim")
        if est.overhead_seconds > max(est.memory_seconds, est.compute_seconds) and not (scaled and scaled.why):
            out.append("At puzzle sizes the launch itself costs more than the work: real kernels are "
                       "millions of elements.\n", style="dim")
        return out

    def _float64(self, f64, gpu: str, spec, bound: str) -> Text:
        """Why the float64 roof is used: which lines promoted float32 work, and what that costs."""
        out = Text()
        out.append("\nfloat64  ", style="bold yellow")
        out.append(f"{f64.flops:,} of the {f64.total:,} FLOPs ran in float64, though no array is float64.")
        lines = self.float64_lines
        if lines:
            out.append(" numba computes float32 combined with a Python number (an int64 or a float64) or a float64 "
                       "variable in float64, on the GPU as here:\n")
            for p in lines[:MAX_PROMOTIONS]:
                out.append(f"  line {p.line:<4}", style="bold")
                out.append(f"{p.source}\n", style="italic")
                out.append("           float64 because of " + "; ".join(p.causes) + "\n", style="dim")
            if len(lines) > MAX_PROMOTIONS:
                out.append(f"  and {len(lines) - MAX_PROMOTIONS} more lines\n", style="dim")
        else:
            out.append(" A Python number in float32 arithmetic does that: `a[i] + 10` or `acc = 0.0` is float64 "
                       "in numba, on the GPU as here.\n")
        f32 = spec.flops.get("float32", 0)
        ratio = f32 / spec.flops["float64"] if spec.flops.get("float64") else 0
        out.append(f"So the float64 roof is used for them ({_si(spec.flops.get('float64', 0), 'FLOP/s')} on the "
                   f"{gpu}" + (f", 1/{ratio:.0f} of float32" if ratio >= 1.5 else "") + "). ")
        out.append("numba.float32(10) and numba.float32(0) keep the work in float32.\n", style="italic")
        if bound == "memory":
            out.append("Here it costs no time: the kernel is memory-bound, and the float64 work hides under the "
                       "memory traffic (on an H200, out[i] = a[i] + 10 "
                       "over 2^24 elements takes 54.4 µs in float64 and in float32: "
                       "docs/gpu-runs/2026-12-01-copy-variants-h200.txt). It matters in compute-bound kernels.\n",
                       style="dim")
        return out

    def action_gpu(self, step: int) -> None:
        names = gpu_names()
        if names:
            self.gpu_index = (self.gpu_index + step) % len(names)

    def watch_gpu_index(self) -> None:
        self.redraw()
