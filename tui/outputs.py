"""Expected against got, per output of one test case, for drawing.

The judge owns the verdict; this only lays out what it hands back. A ``CaseResult`` that carries the case's
outputs as the kernel left them (``case.outputs``: {name: array}) and the spec's values (``case.expected``:
{name: array}) gets one ``OutputPair`` per output, with the cells that differ marked (the puzzle's rtol and
atol, NaN equal to NaN, as the comparison does). A case without them gets none, and the view says what the
check's first mismatch was instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OutputPair:
    name: str
    got: np.ndarray
    expected: np.ndarray
    differs: np.ndarray         # bool, the shape of ``got``

    @property
    def wrong(self) -> int:
        return int(self.differs.sum())

    def first_wrong(self) -> tuple[int, ...] | None:
        bad = np.argwhere(self.differs)
        return tuple(int(i) for i in bad[0]) if len(bad) else None


def differing(got: np.ndarray, expected: np.ndarray, rtol: float = 0.0, atol: float = 0.0) -> np.ndarray:
    got = np.asarray(got)
    if got.dtype.kind in "fc":
        want = np.asarray(expected, dtype=got.dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            return ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    return np.asarray(got != np.asarray(expected), dtype=bool)


def output_pairs(case, puzzle=None) -> list[OutputPair]:
    """The outputs of ``case`` against the spec, in the puzzle's order; [] when the check did not keep them."""
    got_all = getattr(case, "outputs", None) or {}
    want_all = getattr(case, "expected", None) or {}
    names = list(getattr(puzzle, "outputs", ()) or got_all)
    rtol, atol = float(getattr(puzzle, "rtol", 0.0)), float(getattr(puzzle, "atol", 0.0))
    pairs = []
    for name in names:
        if name not in got_all or name not in want_all:
            continue
        got, want = np.asarray(got_all[name]), np.asarray(want_all[name])
        if got.shape != want.shape:
            continue
        pairs.append(OutputPair(name, got, want, differing(got, want, rtol, atol)))
    return pairs
