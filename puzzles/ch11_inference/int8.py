"""Symmetric absmax int8 quantisation (puzzles 73 and 78): keeping the cases' quotients off rounding ties.

Such a kernel stores ``round(x / scale)`` with ``scale = amax / 127``. The quotient is a float computation,
so where its exact value lies next to a half-integer, the integer depends on how the kernel rounded on the
way: ``x / (amax / 127)``, ``x * (127 / amax)``, ``(x * 127) / amax`` and ``x * (1 / scale)`` are each 2 or 3
float32 roundings from the exact ``x * 127 / amax``, so within 3 x 2^-24 x 127 < 2^-15 of it, in opposite
directions as often as not. The cases move every value whose exact quotient lies within ``QUOTIENT_MARGIN``
= 2^-12 (8 times that error) of a half-integer, so every float32 formulation gives the int8 the spec gives;
the exact ties a case wants (quotients that every formulation computes exactly, such as ``scale = 1``) are
left where they are.
"""

from __future__ import annotations

import numpy as np

QUOTIENT_MARGIN = 2.0**-12


def quotients(x, amax, q_max: int) -> np.ndarray:
    """The exact quotients ``x * q_max / amax`` in float64 (0 where ``amax`` is 0)."""
    x = np.asarray(x, dtype=np.float64)
    amax = np.broadcast_to(np.asarray(amax, dtype=np.float64), x.shape)
    return np.divide(x * q_max, amax, out=np.zeros(x.shape), where=amax > 0)


def near_ties(x, amax, q_max: int) -> np.ndarray:
    """True where the exact quotient of ``x`` lies within ``QUOTIENT_MARGIN`` of a half-integer."""
    q = quotients(x, amax, q_max)
    return np.abs(q - (np.floor(q) + 0.5)) < QUOTIENT_MARGIN


def clear_of_ties(x, amax, q_max: int, quantised=None, ties=None) -> np.ndarray:
    """``x`` (float32) with every ``quantised`` value (default: all) whose exact quotient is near a tie moved
    towards zero, to the quarter point between that half-integer and the integer below it in magnitude
    (36.5001 and 36.4999 both -> 36.25, -0.5 -> -0.25): its magnitude only shrinks, so ``amax`` (the value at
    +-q_max, never near a tie) and which values are below an outlier threshold stay as they were. ``ties``
    marks exact ties to keep."""
    x = np.array(x, dtype=np.float32)
    amax = np.broadcast_to(np.asarray(amax, dtype=np.float64), x.shape)
    move = near_ties(x, amax, q_max)
    if quantised is not None:
        move &= np.asarray(quantised, dtype=bool)
    if ties is not None:
        move &= ~np.asarray(ties, dtype=bool)
    q = quotients(x, amax, q_max)[move]
    half = np.floor(q) + 0.5
    x[move] = ((half - 0.25 * np.sign(half)) * amax[move] / q_max).astype(np.float32)
    assert not (near_ties(x, amax, q_max) & move).any()
    return x
