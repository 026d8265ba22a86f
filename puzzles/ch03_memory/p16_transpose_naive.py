"""Puzzle 16 — Naive transpose: one thread per element; one side of the copy is always strided."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Rule, RunStats, Star
from puzzles.rules import max_global_reads_per_thread, max_global_writes_per_thread

TPB = 256            # threads per block; one thread per element, 1D launch

READING = ("*How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog* — Simon Boehm, "
           "kernel 2, *Global Memory Coalescing* (the same effect, measured on a matmul)")

DESCRIPTION = f"""\
# Puzzle 16 — Naive transpose

Transpose a `rows x cols` float32 matrix: `out[j, i] = a[i, j]`, so `out` has shape `(cols, rows)`.

**Example.** `a = [[1, 2, 3], [4, 5, 6]]` (2 x 3) gives `out = [[1, 4], [2, 5], [3, 6]]` (3 x 2).

Each thread copies one element. The launch is one-dimensional, so *you* decide which element thread `t`
gets, and that choice decides which side of the copy is coalesced. Rows are contiguous in memory, so a
warp's 32 lanes can walk along a row of `a` or along a row of `out`, never both:

```
walk a in order: i, j = t // cols, t % cols     walk out in order: j, i = t // rows, t % rows
  loads  a[i, j..j+31]      contiguous  4 sec     loads  a[i..i+31, j]      a column  32 sec
  stores out[j..j+31, i]    a column   32 sec     stores out[j, i..i+31]    contiguous 4 sec
```

Both mappings move the same number of sectors in the simulator (36 per full warp, where 8 would do).
A real GPU tells them apart. On an H200, transposing 8192 x 8192 floats took:

```
  walk a in order   (strided stores)   1074 µs
  walk out in order (strided loads)     507 µs
  a plain copy, one element per thread  399 µs      (puzzle 17's tiled transpose: 263 µs)
```

A strided load fetches whole sectors, and the warps that handle the neighbouring columns a little later
find the rest of each sector still in the L1/L2 caches. A strided store gets no second chance: each of
its 32 partial sectors is a separate write into L2. So when one side must be strided, make it the loads.
Puzzle 17 removes the strided side altogether.

**What's new:** the thread-to-element mapping of a 2D problem, and why coalesced *stores* matter more
than coalesced loads when you cannot have both.

**Launch:** blocks of {TPB} threads, `ceil(rows * cols / {TPB})` blocks: one thread per element (some
spare threads in the last block). The kernel gets `a`, `out`, `rows`, `cols`. Each thread reads `a` once
and writes `out` once.

**Read more:** {READING}
"""


def spec(a: np.ndarray, out: np.ndarray, rows: int, cols: int) -> dict[str, np.ndarray]:
    return {"out": np.ascontiguousarray(a.T)}


def _case(name: str, a, note: str) -> Case:
    a = np.ascontiguousarray(a, dtype=np.float32)
    rows, cols = a.shape
    out = np.full((cols, rows), np.nan, np.float32)
    step = LaunchStep("transpose_naive", grid=(rows * cols + TPB - 1) // TPB, block=TPB,
                      args=("a", "out", "rows", "cols"))
    return Case(name, {"a": a, "out": out, "rows": rows, "cols": cols}, (step,), note)


def _labelled(rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """a[i, j] = i + j / 1000 plus a little noise: every value distinct, its position readable."""
    i, j = np.mgrid[0:rows, 0:cols]
    return i + j / 1000 + rng.uniform(0, 1e-4, (rows, cols))


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 16)
    rows, cols = size(rng, 33, 63, not_multiple_of=8), size(rng, 65, 95, not_multiple_of=8)
    return (
        _case("worked example 2x3", [[1, 2, 3], [4, 5, 6]], "the example from the description"),
        _case("1x1", [[-3.5]], "one element"),
        _case("row 1x37", _labelled(1, 37, rng), "a row becomes a column"),
        _case("column 37x1", _labelled(37, 1, rng), "a column becomes a row"),
        _case(f"{rows}x{cols}", _labelled(rows, cols, rng),
              "not square, no side a multiple of 8: swapping rows and cols shows up"),
        _case("random 64x96", rng.standard_normal((64, 96)), "24 full blocks"),
    )


def _coalesced(sectors: int, ideal: int) -> bool:
    return sectors <= ideal


def one_side_coalesced() -> Rule:
    def check(s: RunStats) -> str | None:
        if _coalesced(s.global_load_sectors, s.ideal_load_sectors) or \
                _coalesced(s.global_store_sectors, s.ideal_store_sectors):
            return None
        return (f"neither side is coalesced: loads move {s.global_load_sectors} sectors (ideal "
                f"{s.ideal_load_sectors}), stores {s.global_store_sectors} (ideal {s.ideal_store_sectors}); "
                "neighbouring threads should walk along a row of `a` or of `out`")

    return Rule("loads or stores coalesced", check)


def stores_coalesced() -> Rule:
    def check(s: RunStats) -> str | None:
        if _coalesced(s.global_store_sectors, s.ideal_store_sectors):
            return None
        return (f"stores move {s.global_store_sectors} sectors where {s.ideal_store_sectors} would do: let "
                "neighbouring threads write neighbouring elements of `out` (and read a column of `a`)")

    return Rule("coalesced stores", check)


PUZZLE = Puzzle(
    slug="transpose-naive",
    number=16,
    title="Naive transpose",
    chapter=3,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("transpose_naive",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_writes_per_thread(1, "out"),
    ),
    stars=(
        Star(2, "one side coalesced: a warp walks along a row of `a` or of `out`", (one_side_coalesced(),)),
        Star(3, "the stores are the coalesced side", (stores_coalesced(),)),
    ),
    hints=(
        "Turn `t = cuda.grid(1)` into a row and a column. Which array's row-major order does `t` follow if "
        "you take `t // cols` and `t % cols`?",
        "Let `t` follow `out`: `out` has `cols` rows of `rows` elements, so `j = t // rows` is the row of "
        "`out` and `i = t % rows` the column.",
        "`if t < rows * cols:` then `j, i = t // rows, t % rows` and `out[j, i] = a[i, j]`.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n elements: a square matrix (power-of-two sides) or as near square as n allows."""
    rows = 1 << (max(n, 1).bit_length() - 1) // 2
    a = np.random.default_rng(8016).standard_normal((rows, max(1, n // rows)), dtype=np.float32)
    return _case(f"bench {a.shape[0]}x{a.shape[1]}", a, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
