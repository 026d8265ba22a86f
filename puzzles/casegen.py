"""Helpers for a puzzle's ``make_cases(rng=None)``: fresh random data and sizes each check, within the rules.

The checker passes a new ``np.random.Generator`` each check (its seed is in the result, so a check can be
replayed); ``None`` means the puzzle's own fixed seed, for tests and docs. Worked examples from a puzzle's
description never depend on ``rng``. A size drawn here keeps the property its case exists for (a multiple of
the block, or not; a partial last tile), so a case means the same whatever the seed.
"""

from __future__ import annotations

import numpy as np


def generator(rng: np.random.Generator | None, seed: int) -> np.random.Generator:
    """``rng``, or a generator with the puzzle's fixed ``seed`` when ``rng`` is None."""
    return rng if rng is not None else np.random.default_rng(seed)


def size(rng: np.random.Generator, low: int, high: int, *, multiple_of: int | None = None,
         not_multiple_of: int | None = None) -> int:
    """A random int in ``[low, high]`` that is (or is not) a multiple of the given number."""
    choices = np.arange(low, high + 1)
    if multiple_of:
        choices = choices[choices % multiple_of == 0]
    if not_multiple_of:
        choices = choices[choices % not_multiple_of != 0]
    if choices.size == 0:
        raise ValueError(f"no size in [{low}, {high}] fits")
    return int(rng.choice(choices))
