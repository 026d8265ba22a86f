"""Test matrices and the matmul spec shared by the chapter's puzzles.

Values are multiples of 1/8 with magnitudes from 0.5 to 2 and random signs. A product is then a multiple of
1/64 of magnitude 0.25..4, and every partial sum of fewer than 65,536 of them is a multiple of 1/64 below
2^18 — exactly representable in float32 (24-bit significand). So a float32 matmul of these matrices is
exact in *any* order of additions, with or without fused multiply-adds, and the checker can compare bit for
bit: a dropped, doubled or misplaced product (at least 0.25) always shows.
"""

from __future__ import annotations

import math

import numpy as np


def generator(rng: np.random.Generator | None, seed: int) -> np.random.Generator:
    """The judge's generator, or the puzzle's fixed one (its number) when there is none."""
    return rng if rng is not None else np.random.default_rng(seed)


def eighths(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """float32 values k/8, k in 4..16, with random signs: never 0, never small, exact products and sums."""
    magnitude = rng.integers(4, 17, shape) / 8.0
    return (magnitude * rng.choice([-1.0, 1.0], shape)).astype(np.float32)


def exact_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b in float64, rounded once to float32 (exact for the matrices above)."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def bench_side(n: int, multiple: int) -> int:
    """The side of a square output of about ``n`` elements, rounded down to a multiple of ``multiple``."""
    return max(multiple, int(math.isqrt(max(int(n), 1))) // multiple * multiple)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)
