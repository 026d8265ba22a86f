"""Puzzle 17 — Tiled transpose: stage a 32x32 tile in shared memory so both global sides coalesce."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
    shared_memory_budget,
)

TILE = 32            # the block transposes one TILE x TILE tile
ROWS = 8             # threads per block: (TILE, ROWS); each thread moves TILE // ROWS = 4 elements
PER_THREAD = TILE // ROWS
BUDGET = TILE * (TILE + 1) * 4   # bytes: one float32 tile with a padding column

READING = "*GPU Glossary* — Modal: the entries *Shared Memory* and *Bank Conflict*"

DESCRIPTION = f"""\
# Puzzle 17 — Tiled transpose

Same job as puzzle 16 — `out[j, i] = a[i, j]` for a `rows x cols` float32 matrix — but now **both** the
loads and the stores must be coalesced. The trick: no thread has to store the element it loaded.
Each block moves one {TILE} x {TILE} tile through shared memory:

```
        a (rows x cols)                   shared tile                    out (cols x rows)
   +----+----+----+                 reads a row of a,               +----+----+
   |    | T  |    |   coalesced      writes a row of tile           |    |    |
   +----+----+----+   row loads   ->  [ 0  1  2 ... 31 ]   then  ->  +----+----+   coalesced
   |    |    |    |                   [32 33 34 ... 63 ]   read      | T' |    |   row stores
   +----+----+----+                   ...                  columns   +----+----+
  tile T = rows r0.., cols c0..                                       tile T' = rows c0.., cols r0..
```

1. Threads read the tile of `a` with rows starting at `r0 = blockIdx.y * {TILE}` and columns at
   `c0 = blockIdx.x * {TILE}`, row by row (lane `tx` takes column `c0 + tx`):
   `tile[y, tx] = a[r0 + y, c0 + tx]`.
2. `cuda.syncthreads()` — each thread is about to read values other threads wrote.
3. The transposed tile goes to rows `c0..` and columns `r0..` of `out`, again row by row with lane `tx`
   on column `r0 + tx`: `out[c0 + y, r0 + tx] = tile[tx, y]`.

Step 3 reads the tile *down a column*. Shared memory has 32 banks of 4-byte words (word `k` lives in
bank `k % 32`); a warp's access is one round trip only if its lanes hit different banks (or the same
word). In a `({TILE}, {TILE})` float tile a column is 32 words that are 32 apart — all in one bank: a
32-way **bank conflict**, 32 round trips. Give each row one extra, unused word — shape
`({TILE}, {TILE + 1})` — and element `[tx, y]` sits in bank `(tx * {TILE + 1} + y) % 32 = (tx + y) % 32`:
all different. (numba needs the shape as constants: write `TILE + 1` into a module constant.)

**Example.** A 2 x 3 `a = [[1, 2, 3], [4, 5, 6]]` fits in one tile: `out = [[1, 4], [2, 5], [3, 6]]`.
Tiles at the right and bottom edges are partial: guard every global access, not the shared ones.

**Four loads, one wait.** A load does not stop a thread; the first use of its value does. A thread that
writes each element into the tile right after loading it waits for DRAM {PER_THREAD} times in a row. Load
all {PER_THREAD} first — into `vals = cuda.local.array({PER_THREAD}, numba.float32)`, in a loop of constant
trip count that the compiler unrolls into registers — then write the tile: one wait. On an H200 at
8192 x 8192 the load-store-load-store loop reaches 42 % of the copy bandwidth (the simulator's judge
does not ask for this; graduate mode shows it).

On an H200, 8192 x 8192 floats, with that load-store loop: padded tile 263 µs, the same kernel with an
unpadded tile 428 µs, the best naive transpose (puzzle 16) 507 µs.

**What's new:** staging through shared memory to change the access order, and bank conflicts — the
shared-memory twin of coalescing — with the padding trick that removes them.

**Launch:** 2D blocks of `({TILE}, {ROWS})` threads, grid `(ceil(cols / {TILE}), ceil(rows / {TILE}))`:
block `(bx, by)` owns the tile at `a[by*{TILE}.., bx*{TILE}..]`. With only {ROWS} rows of threads, each
thread handles {PER_THREAD} elements: rows `ty, ty + {ROWS}, ty + {2 * ROWS}, ty + {3 * ROWS}` of the tile.
At most {BUDGET} bytes of shared memory per block (one padded tile).

**Read more:** {READING}
"""


def spec(a: np.ndarray, out: np.ndarray, rows: int, cols: int) -> dict[str, np.ndarray]:
    return {"out": np.ascontiguousarray(a.T)}


def _case(name: str, a, note: str) -> Case:
    a = np.ascontiguousarray(a, dtype=np.float32)
    rows, cols = a.shape
    out = np.full((cols, rows), np.nan, np.float32)
    grid = ((cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE)
    step = LaunchStep("transpose_tiled", grid=grid, block=(TILE, ROWS), args=("a", "out", "rows", "cols"))
    return Case(name, {"a": a, "out": out, "rows": rows, "cols": cols}, (step,), note)


def _labelled(rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """a[i, j] = i + j / 1000 plus a little noise: every value distinct, its position readable."""
    i, j = np.mgrid[0:rows, 0:cols]
    return i + j / 1000 + rng.uniform(0, 1e-4, (rows, cols))


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    # Sides are 1, 2, 3 or multiples of 8, so every row starts on a sector boundary (or the whole matrix
    # fits in one sector) and an ideally coalesced kernel really reaches the ideal sector count.
    rng = generator(rng, 17)
    rows = size(rng, 33, 63, multiple_of=8)
    cols = size(rng, 65, 95, multiple_of=8, not_multiple_of=TILE)
    return (
        _case("worked example 2x3", [[1, 2, 3], [4, 5, 6]], "the example: one partial tile"),
        _case("1x1", [[7.25]], "one element, one block, 255 idle threads"),
        _case("row 1x40", _labelled(1, 40, rng), "two tiles side by side, each one row high"),
        _case("column 40x1", _labelled(40, 1, rng), "two tiles stacked, each one column wide"),
        _case(f"{rows}x{cols}", _labelled(rows, cols, rng),
              f"not square; the right and bottom tiles are partial ({cols % TILE} columns, {rows % TILE} rows)"),
        _case("random 96x64", rng.standard_normal((96, 64)), "six full tiles"),
    )


PUZZLE = Puzzle(
    slug="transpose-tiled",
    number=17,
    title="Tiled transpose",
    chapter=3,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("transpose_tiled",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        must_use_shared(),
        shared_memory_budget(BUDGET),
        max_global_reads_per_thread(PER_THREAD, "a"),
        max_global_writes_per_thread(PER_THREAD, "out"),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced: loads walk rows of `a`, stores walk rows of `out`", (ideal_coalescing(),)),
        Star(3, "no bank conflicts: pad the tile", (no_bank_conflicts(),)),
    ),
    hints=(
        "Write it in three parts: fill the shared tile from `a`, one `cuda.syncthreads()`, empty the tile "
        "into `out`. Each part loops `for k in range(TILE // ROWS)` over the rows `y = ty + k * ROWS` (ty, "
        "ty + 8, ty + 16, ty + 24); fill in two such loops: all loads into a local array, then all stores.",
        "Load: `r, c = r0 + y, c0 + tx`; `vals[k] = a[r, c]` if inside `a` (else 0), then "
        "`tile[y, tx] = vals[k]`. Store: `r, c = c0 + y, r0 + tx` (the block's tile, transposed: rows of "
        "`out` come from columns of `a`); if inside `out`, `out[r, c] = tile[tx, y]`.",
        f"Declare `tile = cuda.shared.array((TILE, PADDED), numba.float32)` with module constant "
        f"`PADDED = TILE + 1` = {TILE + 1}. The extra column is never used: it only shifts each row by "
        "one bank.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n elements: a square matrix (power-of-two sides) or as near square as n allows."""
    rows = 1 << (max(n, 1).bit_length() - 1) // 2
    a = np.random.default_rng(8017).standard_normal((rows, max(1, n // rows)), dtype=np.float32)
    return _case(f"bench {a.shape[0]}x{a.shape[1]}", a, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
