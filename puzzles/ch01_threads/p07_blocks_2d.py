"""Puzzle 7 — Blocks 2-D: a 2-D grid of 2-D blocks over a matrix that fits neither way."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread

READING = ("*GPU Glossary* — Modal: the entries *Thread Block Grid* and *CUDA Programming Model* "
           "(grids and blocks in up to three dimensions)")

DESCRIPTION = f"""\
# Puzzle 7 — Blocks 2-D

Add 10 to every element of a `rows × cols` matrix, `out[r, c] = a[r, c] + 10`, with a **2-D grid of 2-D
blocks**. Neither dimension of the matrix is a multiple of the block's.

**Example.** A 5 × 7 matrix, blocks of 4 × 4 threads, a grid of 2 × 2 blocks
(`#` = a thread with an element, `-` = an idle thread):

```
                    blockIdx.x = 0       blockIdx.x = 1
               c:   0  1  2  3           4  5  6  7
blockIdx.y = 0 r=0  #  #  #  #     |     #  #  #  -
               r=1  #  #  #  #     |     #  #  #  -
               r=2  #  #  #  #     |     #  #  #  -
               r=3  #  #  #  #     |     #  #  #  -
               ------------------------------------
blockIdx.y = 1 r=4  #  #  #  #     |     #  #  #  -
               r=5  -  -  -  -     |     -  -  -  -
               r=6  -  -  -  -     |     -  -  -  -
               r=7  -  -  -  -     |     -  -  -  -
```
Thread `(x=2, y=0)` of block `(1, 1)` owns row `1*4 + 0 = 4`, column `1*4 + 2 = 6`: it writes
`out[4, 6] = a[4, 6] + 10`.

**What's new:** puzzles 4 and 6 together. The global row comes from the y coordinates
(`blockIdx.y * blockDim.y + threadIdx.y`), the global column from the x coordinates; `cuda.grid(2)`
returns both, x first. Only the blocks on the right and bottom edges have idle threads.

**Launch:** blocks of `(bx, by)` threads (shapes vary: 4×4, 8×8, 16×8, 32×4, 4×16, 16×16), a grid of
`(ceil(cols / bx), ceil(rows / by))` blocks; `rows` and `cols` are passed to the kernel. Each thread may
read `a` once and write `out` once.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, rows: int, cols: int) -> dict[str, np.ndarray]:
    return {"out": a + np.float32(10)}


def _case(name: str, a: np.ndarray, block: tuple[int, int], note: str = "") -> Case:
    a = np.ascontiguousarray(a, dtype=np.float32)
    rows, cols = a.shape
    out = np.full_like(a, np.nan)
    grid = (-(-cols // block[0]), -(-rows // block[1]))
    step = LaunchStep("blocks_2d_kernel", grid=grid, block=block, args=("out", "a", "rows", "cols"))
    return Case(name, {"out": out, "a": a, "rows": int(rows), "cols": int(cols)}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 7)
    rows, cols = size(rng, 33, 47, not_multiple_of=8), size(rng, 49, 63)
    return (
        _case("random 5x7, 4x4 blocks", rng.integers(-9, 10, (5, 7)), (4, 4),
              "the shape from the description"),
        _case(f"random {rows}x{cols}, 16x8 blocks", rng.normal(0, 10, (rows, cols)), (16, 8),
              "fits neither way; not square, so rows and columns cannot be swapped"),
        _case("random 20x30, 16x16 blocks", rng.normal(0, 10, (20, 30)), (16, 16), "a 2x2 grid, mostly idle"),
        _case("random 8x100, 32x4 blocks", rng.normal(0, 10, (8, 100)), (32, 4), "wide and flat"),
        _case("random 50x3, 4x16 blocks", rng.normal(0, 10, (50, 3)), (4, 16), "tall and thin"),
        _case("random 32x16, 8x8 blocks", rng.normal(0, 10, (32, 16)), (8, 8), "the blocks fit exactly"),
        _case("1x1, 8x8 block", np.array([[3.5]]), (8, 8), "one element, 63 idle threads"),
    )


PUZZLE = Puzzle(
    slug="blocks-2d",
    number=7,
    title="Blocks 2-D",
    chapter=1,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("blocks_2d_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_writes_per_thread(1, "out"),
    ),
    stars=(
        # With 4- and 8-wide blocks a warp covers several short, unaligned pieces of rows, so even the right
        # mapping moves up to ~1.7x the ideal sectors on these cases.
        Star(2, "coalesced: threadIdx.x walks along a row", (ideal_coalescing(2.0),)),
    ),
    hints=(
        "Work out the global row and the global column separately, each from its own dimension.",
        "`c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`, and the same with `.y` for `r` "
        "(or `c, r = cuda.grid(2)`).",
        "`if r < rows and c < cols: out[r, c] = a[r, c] + 10`.",
    ),
    reading=READING,
    rtol=1e-6,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n elements: rows of 8,192 columns (fewer when n is small), blocks of 32x8 threads."""
    cols = min(8192, n)
    a = np.random.default_rng(8007).standard_normal((max(1, n // cols), cols), dtype=np.float32)
    return _case(f"bench {a.shape[0]}x{cols}", a, (32, 8))


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
