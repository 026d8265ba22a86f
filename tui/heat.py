"""Drawing helpers for the visualisers: heat colours, grids of cells, bars (Rich text, no Textual)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from rich.text import Text

# counts 1, 2-3, 4-7, ... 128+: once is calm, many times is hot
RAMP = ("#2a6f97", "#2a9d8f", "#8ab17d", "#e9c46a", "#f4a261", "#e76f51", "#d62828", "#9d0208")


def heat_level(value: int) -> int:
    return min(len(RAMP) - 1, int(value).bit_length() - 1)


def heat_style(value: int, vmax: int = 0) -> str:
    """A background for a count (log scale: 1, 2-3, 4-7, ...); "" for zero."""
    if value <= 0:
        return ""
    level = heat_level(value)
    fg = "black" if 2 <= level <= 4 else "white"
    return f"{fg} on {RAMP[level]}"


def legend(vmax: int, what: str) -> Text:
    """A colour key for counts up to ``vmax``."""
    out = Text(f"{what}: ", style="dim")
    if vmax <= 0:
        out.append("none", style="dim")
        return out
    out.append(" 0 ", style="dim")
    for level in range(heat_level(vmax) + 1):
        lo = 1 << level
        label = f"{lo}+" if level == len(RAMP) - 1 else str(lo) if lo == (2 * lo - 1) else f"{lo}-{2 * lo - 1}"
        out.append(f" {label} ", style=heat_style(lo))
    return out


def bar(fraction: float, width: int = 20, good: str = "green", bad: str = "red") -> Text:
    """A bar ``fraction`` full (0..1), green when full, turning red as it empties."""
    fraction = 0.0 if not math.isfinite(fraction) else max(0.0, min(1.0, fraction))
    filled = round(fraction * width)
    colour = good if fraction >= 0.999 else "yellow" if fraction >= 0.5 else bad
    return Text.assemble(("█" * filled, colour), ("░" * (width - filled), "dim"))


def as_rows(values: np.ndarray, width: int = 16) -> tuple[np.ndarray, Callable[[int, int], tuple[int, ...]]]:
    """A 2-D view of any array for drawing, and a map from (row, col) back to the array's index.

    1-D arrays wrap into rows of ``width``; 2-D stay; more dimensions fold into rows of the last one.
    Cells past the end of a wrapped 1-D array hold -1.
    """
    shape = values.shape
    if values.ndim == 0:
        return values.reshape(1, 1), lambda r, c: ()
    if values.ndim == 1:
        n = shape[0]
        w = max(1, min(width, n))
        rows = -(-n // w)
        padded = np.full(rows * w, -1, dtype=np.int64)
        padded[:n] = values
        return padded.reshape(rows, w), lambda r, c: (r * w + c,)
    if values.ndim == 2:
        return values, lambda r, c: (r, c)
    flat = values.reshape(-1, shape[-1])
    return flat, lambda r, c: tuple(int(i) for i in np.unravel_index(r * shape[-1] + c, shape))


def window(total: int, size: int, focus: int) -> tuple[int, int]:
    """The [start, end) of a ``size``-long window over ``total`` items that keeps ``focus`` in view."""
    if total <= size:
        return 0, total
    start = min(max(0, focus - size // 2), total - size)
    return start, start + size
