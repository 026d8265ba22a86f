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

from puzzles.model import Case, LaunchStep


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


# --- cases shared by the float32 puzzles (48-54): c = a @ b, c filled with NaN ----------------------------

def spec(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> dict[str, np.ndarray]:
    """The spec of every float32 puzzle of the chapter but split-K: c = a @ b."""
    return {"c": exact_product(a, b)}


def matmul_buffers(a, b) -> dict[str, np.ndarray]:
    """``a`` and ``b`` as contiguous float32, and ``c`` of the product's shape filled with NaN."""
    a, b = np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32)
    assert a.ndim == b.ndim == 2 and a.shape[1] == b.shape[0], (a.shape, b.shape)
    return {"a": a, "b": b, "c": np.full((a.shape[0], b.shape[1]), np.nan, np.float32)}


def tiled_case(name: str, a, b, note: str, kernel: str, tile: tuple[int, int], block: tuple[int, int]) -> Case:
    """One launch of ``kernel`` with a block per ``tile`` (rows, columns) of c: grid (ceil(n/cols), ceil(m/rows))."""
    buffers = matmul_buffers(a, b)
    m, n = buffers["c"].shape
    grid = (ceil_div(n, tile[1]), ceil_div(m, tile[0]))
    return Case(name, buffers, (LaunchStep(kernel, grid=grid, block=block, args=("a", "b", "c")),), note)


def random_cases(rng: np.random.Generator, example: Case, shapes, make) -> tuple[Case, ...]:
    """The worked example, then ``make(name, a, b, note)`` for each ``((m, k, n), note)`` with random eighths."""
    cases = [example]
    for (m, k, n), note in shapes:
        cases.append(make(f"random {m}x{k} @ {k}x{n}", eighths(rng, (m, k)), eighths(rng, (k, n)), note))
    return tuple(cases)


def square_bench(make, n: int, multiple: int, seed: int) -> Case:
    """Graduate mode: a square matmul with about ``n`` outputs and k = the side, built by ``make``."""
    side = bench_side(n, multiple)
    rng = np.random.default_rng(seed)
    return make(f"bench {side}x{side} @ {side}x{side}", eighths(rng, (side, side)), eighths(rng, (side, side)),
                "graduate mode")
