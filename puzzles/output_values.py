"""What a case's outputs held against what the spec expects, kept for the TUI to draw (``OutputValues``).

The judging process makes them right after the comparison, from the buffers gpusim left and the spec's
values it computed itself (never from anything the player's file sent), with the comparison's own rule for
which elements differ (``compare.element_matches``). An output of at most ``MAX_KEPT`` elements is kept
whole; a larger one as a box of at most ``MAX_KEPT`` elements around its first difference (around its start
when nothing differs), shared between the dimensions, with the whole output's shape, dtype and count of
wrong elements. So a check hands back at most ``MAX_KEPT`` × (2 × itemsize + 1) bytes per output and case:
68 KiB for a float64 output, 36 KiB for float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .compare import element_matches
from .results import OutputValues

MAX_KEPT = 4096
"""Elements of one output kept per case (the whole output when it is no larger)."""
CONTEXT = 4
"""Of a box's length along a dimension, 1/CONTEXT lies before the first difference."""


def output_values(name: str, got: Any, expected: Any, rtol: float = 0.0, atol: float = 0.0,
                  limit: int = MAX_KEPT) -> OutputValues:
    """``got`` (the buffer after the case) against ``expected`` (the spec's value for it), capped."""
    got = np.asarray(got)
    want, ok = element_matches(name, got, expected, rtol, atol)
    differs = ~ok
    wrong = int(differs.sum())
    first = tuple(int(i) for i in np.argwhere(differs)[0]) if wrong else None
    lengths = box_lengths(got.shape, limit)
    origin = tuple(0 if first is None else max(0, min(f - n // CONTEXT, size - n))
                   for f, n, size in zip(first or (0,) * got.ndim, lengths, got.shape))
    box = tuple(slice(o, o + n) for o, n in zip(origin, lengths))
    return OutputValues(name=name, shape=tuple(int(s) for s in got.shape), dtype=got.dtype.name, origin=origin,
                        got=got[box].copy(), expected=want[box].copy(), differs=differs[box].copy(),
                        wrong=wrong, first_wrong=first)


def box_lengths(shape: tuple[int, ...], limit: int = MAX_KEPT) -> tuple[int, ...]:
    """The box's length along each dimension: the whole shape if it has at most ``limit`` elements, else as
    even a share of ``limit`` as the dimensions allow (a short dimension is kept whole, the rest share what is
    left)."""
    if int(np.prod(shape, dtype=np.int64)) <= limit:
        return tuple(int(s) for s in shape)
    lengths = [0] * len(shape)
    left = limit
    order = sorted(range(len(shape)), key=lambda d: shape[d])
    for k, d in enumerate(order):
        dims_left = len(shape) - k
        share = max(1, int(round(left ** (1.0 / dims_left))))
        while share > 1 and share ** dims_left > left:
            share -= 1
        lengths[d] = max(1, min(int(shape[d]), share))
        left = max(1, left // lengths[d])
    return tuple(lengths)
