"""Puzzle 4 — Map 2-D: a 2-D block of threads over a square matrix, with a guard in both dimensions."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread

READING = ("*How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog* — Simon Boehm, "
           "kernel 2, *Global Memory Coalescing* (why x should walk along a row)")

DESCRIPTION = f"""\
# Puzzle 4 — Map 2-D

Add 10 to every element of an `n × n` matrix:

    out[r, c] = a[r, c] + 10

**Example.** `n = 3` with a block of 4 × 4 threads:

```
                   x = threadIdx.x  (column) →
                     0      1      2      3
y = threadIdx.y  0 [ 11  | 12  | 13  ]    -
    (row)        1 [ 14  | 15  | 16  ]    -
                 2 [ 17  | 18  | 19  ]    -
                 3    -      -      -     -        - : thread outside the matrix, does nothing
```
for `a = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]`.

**What's new:** a block can be two-dimensional. Each thread has `cuda.threadIdx.x` *and*
`cuda.threadIdx.y`, and the guard must check both. Which one is the row? Use **x for the column and y for
the row**: threads that sit next to each other in a warp differ in x, and elements that sit next to each
other in memory differ in the column (NumPy arrays are row-major). Then a warp reads one contiguous run of
memory — a *coalesced* access, worth the second star. The other way round gives the right numbers but
scatters each warp's reads over many rows.

**Launch:** one block of `B × B` threads (`B` is 2, 4, 8 or 16 here) with `n <= B`; `n` is passed to the
kernel. Each thread may read `a` once and write `out` once.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, n: int) -> dict[str, np.ndarray]:
    return {"out": a + np.float32(10)}


def _case(name: str, a: np.ndarray, b: int, note: str = "") -> Case:
    a = np.ascontiguousarray(a, dtype=np.float32)
    out = np.full_like(a, np.nan)
    step = LaunchStep("map_2d_kernel", grid=(1, 1), block=(b, b), args=("out", "a", "n"))
    return Case(name, {"out": out, "a": a, "n": int(a.shape[0])}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 4)
    n = size(rng, 9, 15)
    return (
        _case("worked example n=3, 4x4 block", np.arange(1, 10).reshape(3, 3),
              4, "the example from the description"),
        _case("random n=7, 8x8 block", rng.normal(0, 10, (7, 7)), 8, "one idle row and one idle column"),
        _case("random n=8, 8x8 block", rng.normal(0, 10, (8, 8)), 8, "the block fits exactly"),
        _case(f"random n={n}, 16x16 block", rng.normal(0, 10, (n, n)), 16,
              "idle rows and columns; an index mix-up (a[c, r]) shows, as the matrix is not symmetric"),
        _case("random n=16, 16x16 block", rng.normal(0, 10, (16, 16)), 16, "eight full warps"),
        _case("n=1, 2x2 block", np.array([[-1.5]]), 2, "one element, three idle threads"),
    )


PUZZLE = Puzzle(
    slug="map-2d",
    number=4,
    title="Map 2-D",
    chapter=1,
    difficulty=1,
    description=DESCRIPTION,
    kernels=("map_2d_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_writes_per_thread(1, "out"),
    ),
    stars=(
        # Rows of n floats are not 32-byte aligned when n is not a multiple of 8, so even the right mapping
        # moves up to ~1.25x the ideal sectors; the transposed mapping moves 1.9-4x on these cases.
        Star(2, "coalesced: threadIdx.x walks along a row", (ideal_coalescing(1.5),)),
    ),
    hints=(
        "Two coordinates now: `cuda.threadIdx.x` and `cuda.threadIdx.y`. A thread is outside the matrix if "
        "either one is too large.",
        "Name them for what they index: `c = cuda.threadIdx.x` (column), `r = cuda.threadIdx.y` (row); "
        "work only if `r < n and c < n`.",
        "`if r < n and c < n: out[r, c] = a[r, c] + 10`.",
    ),
    reading=READING,
    rtol=1e-6,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
BENCH_NOTE = ("one block by design (the kernel indexes with threadIdx only): timed at the largest block, 1,024 "
              "threads")


def bench_max() -> Case:
    """The largest valid launch: a 32x32 matrix, one block of 32x32 threads."""
    a = np.random.default_rng(8004).standard_normal((32, 32), dtype=np.float32)
    return _case("bench: 32x32, one block of 32x32", a, 32, "the largest valid launch")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench_max": bench_max, "bench_note": BENCH_NOTE}))
