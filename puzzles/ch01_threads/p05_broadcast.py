"""Puzzle 5 — Broadcast: a column vector plus a row vector gives a matrix."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread

READING = ("*Making Deep Learning Go Brrrr From First Principles* — Horace He: the section on operator "
           "fusion (a broadcast add is the kind of op that is cheap to compute and costly to move)")

DESCRIPTION = f"""\
# Puzzle 5 — Broadcast

Given a vector `a` of length `rows` and a vector `b` of length `cols`, fill the `rows × cols` matrix

    out[r, c] = a[r] + b[c]

This is NumPy's `a[:, None] + b[None, :]`: `a` is stretched along the columns, `b` along the rows.

**Example.** `a = [0, 10, 20]`, `b = [1, 2, 3, 4]`, block of 4 × 4 threads:

```
                 b:    1     2     3     4
                     x=0   x=1   x=2   x=3
a:  0   y=0        [  1  |  2  |  3  |  4 ]
   10   y=1        [ 11  | 12  | 13  | 14 ]
   20   y=2        [ 21  | 22  | 23  | 24 ]
        y=3           -     -     -     -        - : idle thread
```

**What's new:** the output is bigger than either input, and the matrix is not square: `rows` and `cols`
differ, so the guard needs both, and swapping them reads past the end of a vector. Thread `(x, y)` reads
`a[y]` and `b[x]` — many threads read the same element of `a`, which costs little, since a warp's threads
reading one address are served together.

**Launch:** one 2-D block with `blockDim.x >= cols` and `blockDim.y >= rows`; `rows` and `cols` are passed
to the kernel. Each thread may read `a` once, `b` once, and write `out` once.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, b: np.ndarray, rows: int, cols: int) -> dict[str, np.ndarray]:
    return {"out": a[:, None] + b[None, :]}


def _case(name: str, a: np.ndarray, b: np.ndarray, block: tuple[int, int], note: str = "") -> Case:
    a, b = a.astype(np.float32), b.astype(np.float32)
    out = np.full((a.size, b.size), np.nan, dtype=np.float32)
    step = LaunchStep("broadcast_kernel", grid=(1, 1), block=block, args=("out", "a", "b", "rows", "cols"))
    buffers = {"out": out, "a": a, "b": b, "rows": int(a.size), "cols": int(b.size)}
    return Case(name, buffers, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 5)
    rows, cols = size(rng, 9, 15), size(rng, 17, 31)
    return (
        _case("worked example 3x4, 4x4 block", np.array([0, 10, 20]), np.array([1, 2, 3, 4]), (4, 4),
              "the example from the description"),
        _case("random 5x7, 8x8 block", rng.normal(100, 10, 5), rng.normal(0, 1, 7), (8, 8),
              "a and b on different scales, so mixing them up shows"),
        _case("random 8x3, 8x8 block", rng.normal(-50, 10, 8), rng.normal(0, 1, 3), (8, 8),
              "more rows than columns"),
        _case("random 6x13, 16x8 block", rng.normal(100, 10, 6), rng.normal(0, 1, 13), (16, 8),
              "a wide, flat block: only x can cover the 13 columns"),
        _case(f"random {rows}x{cols}, 32x16 block", rng.normal(0, 10, rows), rng.normal(0, 10, cols), (32, 16),
              "idle threads in both directions"),
        _case("1x1, 2x2 block", np.array([2.5]), np.array([-0.25]), (2, 2), "one element"),
    )


PUZZLE = Puzzle(
    slug="broadcast",
    number=5,
    title="Broadcast",
    chapter=1,
    difficulty=1,
    description=DESCRIPTION,
    kernels=("broadcast_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_reads_per_thread(1, "b"),
        max_global_writes_per_thread(1, "out"),
    ),
    stars=(
        # The right mapping moves at most ~1.1x the ideal sectors on these cases (rows of `out` are not
        # 32-byte aligned); the transposed one up to 6x.
        Star(2, "coalesced: threadIdx.x walks along a row", (ideal_coalescing(1.5),)),
    ),
    hints=(
        "Which thread coordinate runs along the columns of `out`? That is the one that indexes `b`.",
        "`c = cuda.threadIdx.x`, `r = cuda.threadIdx.y`; a thread works only if `r < rows and c < cols`.",
        "`out[r, c] = a[r] + b[c]` inside that `if`.",
    ),
    reading=READING,
    rtol=1e-6,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
BENCH_NOTE = ("one block by design (the kernel indexes with threadIdx only): timed at the largest block, 1,024 "
              "threads")


def bench_max() -> Case:
    """The largest valid launch: a 32x32 output, one block of 32x32 threads."""
    rng = np.random.default_rng(8005)
    a, b = rng.standard_normal((2, 32), dtype=np.float32)
    return _case("bench: 32x32, one block of 32x32", a, b, (32, 32), "the largest valid launch")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench_max": bench_max, "bench_note": BENCH_NOTE}))
