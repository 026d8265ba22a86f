"""Comparing a kernel's outputs with the puzzle's spec, and describing the first difference.

Integer and boolean outputs must match exactly. Float outputs match within ``rtol``/``atol`` (both 0 means
exactly), after the expected values are rounded to the output's dtype, since that is all the buffer can hold.
A NaN where a number is expected is a mismatch: outputs start as NaN sentinels, so a NaN usually means no
thread wrote that element — and when the element still holds its starting value, the message says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


class PuzzleBug(Exception):
    """The puzzle itself is inconsistent (its spec, cases or rules), not the player's kernel."""


@dataclass(frozen=True)
class Mismatch:
    """The first wrong element of an output, and how many elements of that output are wrong."""

    output: str
    index: tuple[int, ...]
    expected: Any              # NumPy scalar
    got: Any
    count: int                 # elements that differ
    total: int                 # elements in the output
    unchanged: bool            # the element still holds the value it had before the launch

    @property
    def message(self) -> str:
        where = f"`{self.output}`" + (f" at index {_fmt_index(self.index)}" if self.index else "")
        text = f"{where}: expected {_fmt(self.expected)}, got {_fmt(self.got)}"
        if self.unchanged and isinstance(self.got, (float, np.floating)) and np.isnan(self.got):
            text += " (still NaN, as before the launch: no thread wrote it, or the kernel computed NaN)"
        elif self.unchanged:
            text += " (unchanged since before the launch: no thread wrote it)"
        if self.total > 1:
            text += f"; {self.count} of {self.total} elements differ"
        return "wrong output " + text

    def to_dict(self) -> dict:
        return {
            "output": self.output,
            "index": list(self.index),
            "expected": json_scalar(self.expected),
            "got": json_scalar(self.got),
            "count": self.count,
            "total": self.total,
            "unchanged": self.unchanged,
        }


def first_mismatch(outputs: tuple[str, ...], got: Mapping[str, Any], expected: Mapping[str, Any],
                   before: Mapping[str, Any], rtol: float = 0.0, atol: float = 0.0) -> Mismatch | None:
    """The first output (in ``outputs`` order) that differs from ``expected``, or None if all match."""
    for name in outputs:
        if name not in got:
            raise PuzzleBug(f"output {name!r} is not one of the case's buffers")
        if name not in expected:
            raise PuzzleBug(f"the spec returned no value for output {name!r}")
        mismatch = _compare_one(name, np.asarray(got[name]), expected[name], before.get(name), rtol, atol)
        if mismatch is not None:
            return mismatch
    return None


def _compare_one(name: str, got: np.ndarray, expected: Any, before: Any,
                 rtol: float, atol: float) -> Mismatch | None:
    is_float = np.issubdtype(got.dtype, np.floating) or np.issubdtype(got.dtype, np.complexfloating)
    try:
        want = np.asarray(expected, dtype=got.dtype) if is_float else np.asarray(expected)
    except (TypeError, ValueError) as e:
        raise PuzzleBug(f"the spec's value for {name!r} cannot be compared: {e}") from None
    if want.shape != got.shape:
        raise PuzzleBug(f"the spec's {name!r} has shape {want.shape} but the output buffer has {got.shape}")
    if is_float:
        with np.errstate(invalid="ignore", over="ignore"):
            ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = got == want
    ok = np.asarray(ok, dtype=bool)
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    index = tuple(int(i) for i in bad[0])
    unchanged = False
    if before is not None:
        start = np.asarray(before)
        if start.shape == got.shape:
            a, b = got[index], start[index]
            unchanged = bool(a == b or (is_float and np.isnan(a) and np.isnan(b)))
    return Mismatch(output=name, index=index, expected=want[index], got=got[index],
                    count=int(bad.shape[0]), total=int(got.size), unchanged=unchanged)


def _fmt(value: Any) -> str:
    return str(value)   # NumPy scalars print their shortest round-trip form: 0.1, not 0.10000000149011612


def _fmt_index(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]"


def json_scalar(value: Any) -> Any:
    """A JSON-safe form of a NumPy or Python scalar: non-finite floats become the strings "nan", "inf"."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    if isinstance(value, complex):
        return str(value)
    return value
