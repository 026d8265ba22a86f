"""Comparing a kernel's outputs with the puzzle's spec, and describing the first difference.

Integer and boolean outputs must match exactly. Float outputs match within ``rtol``/``atol`` (both 0 means
exactly), after the expected values are rounded to the output's dtype, since that is all the buffer can hold.
A NaN where a number is expected is a mismatch: outputs start as NaN sentinels, so a NaN usually means no
thread wrote that element. When the element still holds its starting value, the message says whether a
thread wrote it (an integer output can be written with a value equal to its sentinel) or none did, from the
simulator's per-element write counts where it has them.

``changed_input`` finds the first buffer that is not an output but changed during the case: inputs must stay
as they were, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    written: int | None = None  # lane-writes to that element over the case's launches (None: not counted)

    @property
    def message(self) -> str:
        where = f"`{self.output}`" + (f" at index {_fmt_index(self.index)}" if self.index else "")
        text = f"{where}: expected {_fmt(self.expected)}, got {_fmt(self.got)}"
        nan = isinstance(self.got, (float, np.floating)) and np.isnan(self.got)
        if self.unchanged and self.written:
            text += (f" (a thread wrote {_fmt(self.got)} here, the value the buffer started with"
                     + (": the kernel computed NaN)" if nan else ")"))
        elif self.unchanged and self.written == 0:
            text += " (still NaN, as before the launch: no thread wrote it)" if nan else \
                " (unchanged since before the launch: no thread wrote it)"
        elif self.unchanged and nan:
            text += " (still NaN, as before the launch: no thread wrote it, or the kernel computed NaN)"
        elif self.unchanged:
            text += " (unchanged since before the launch: no thread wrote it, or one wrote the same value)"
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
            "written": self.written,
        }


@dataclass(frozen=True)
class ChangedInput:
    """A buffer that is not an output but is different after the case: the kernel wrote to an input."""

    name: str
    index: tuple[int, ...]
    before: Any
    after: Any
    count: int
    total: int

    @property
    def message(self) -> str:
        where = f"`{self.name}`" + (f" at index {_fmt_index(self.index)}" if self.index else "")
        text = (f"your kernel changed the input {where}: it was {_fmt(self.before)}, now {_fmt(self.after)}; "
                f"inputs must stay as they were (write only to the outputs)")
        if self.total > 1:
            text += f"; {self.count} of {self.total} elements changed"
        return text

    def to_dict(self) -> dict:
        return {"output": self.name, "changed_input": True, "index": list(self.index),
                "expected": json_scalar(self.before), "got": json_scalar(self.after), "count": self.count,
                "total": self.total}


def first_mismatch(outputs: tuple[str, ...], got: Mapping[str, Any], expected: Mapping[str, Any],
                   before: Mapping[str, Any], rtol: float = 0.0, atol: float = 0.0,
                   written: Callable[[str], Any] | None = None) -> Mismatch | None:
    """The first output (in ``outputs`` order) that differs from ``expected``, or None if all match.

    ``written(name)``, where given, returns the per-element write counts of an output (or None).
    """
    for name in outputs:
        if name not in got:
            raise PuzzleBug(f"output {name!r} is not one of the case's buffers")
        if name not in expected:
            raise PuzzleBug(f"the spec returned no value for output {name!r}")
        mismatch = _compare_one(name, np.asarray(got[name]), expected[name], before.get(name), rtol, atol)
        if mismatch is not None:
            if mismatch.unchanged and written is not None:
                mismatch = _with_writes(mismatch, written(name))
            return mismatch
    return None


def changed_input(outputs: tuple[str, ...], after: Mapping[str, Any],
                  before: Mapping[str, Any]) -> ChangedInput | None:
    """The first array buffer not in ``outputs`` whose bytes differ between ``before`` and ``after``."""
    for name, start in before.items():
        if name in outputs or not isinstance(start, np.ndarray):
            continue
        end = np.asarray(after.get(name))
        if end.shape != start.shape or end.dtype != start.dtype:
            return ChangedInput(name, (), "an array of " + str(start.shape), "another array", start.size,
                                start.size)
        if end.tobytes() == start.tobytes():
            continue
        a = start.reshape(-1).view(np.uint8).reshape(start.size, -1) if start.size else start
        b = end.reshape(-1).view(np.uint8).reshape(end.size, -1) if end.size else end
        differs = np.any(a != b, axis=1)
        flat = int(np.flatnonzero(differs)[0])
        index = tuple(int(i) for i in np.unravel_index(flat, start.shape)) if start.ndim else ()
        return ChangedInput(name, index, start[index] if index else start.reshape(-1)[flat],
                            end[index] if index else end.reshape(-1)[flat], int(differs.sum()), int(start.size))
    return None


def _with_writes(mismatch: Mismatch, counts: Any) -> Mismatch:
    if counts is None:
        return mismatch
    counts = np.asarray(counts)
    try:
        n = int(counts[mismatch.index]) if mismatch.index else int(counts.reshape(-1)[0])
    except (IndexError, ValueError, TypeError):
        return mismatch
    return Mismatch(mismatch.output, mismatch.index, mismatch.expected, mismatch.got, mismatch.count,
                    mismatch.total, mismatch.unchanged, n)


def element_matches(name: str, got: np.ndarray, expected: Any, rtol: float = 0.0,
                    atol: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(the expected values as compared, a bool array: which elements of ``got`` match them), by the rules
    above. Raises ``PuzzleBug`` when the spec's value cannot be compared with the buffer."""
    is_float = _is_float(got)
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
    return want, np.asarray(ok, dtype=bool)


def _is_float(a: np.ndarray) -> bool:
    return bool(np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.complexfloating))


def _compare_one(name: str, got: np.ndarray, expected: Any, before: Any,
                 rtol: float, atol: float) -> Mismatch | None:
    is_float = _is_float(got)
    want, ok = element_matches(name, got, expected, rtol, atol)
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
