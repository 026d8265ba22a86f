"""Puzzle 26 — CSR sparse matrix-vector product: one warp per row, rows of very different lengths."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator
from puzzles.model import Case, LaunchStep, Puzzle, Rule, RunStats, Star
from puzzles.rules import max_global_writes_per_thread, no_atomics, no_shared

TPB = 128                  # 4 warps per block = 4 rows per block
ROWS_PER_BLOCK = TPB // 32
LONGEST = 300              # the longest row among the cases
SPREAD = 2 + 3 * -(-LONGEST // 32) + 2   # indptr twice, then (indices, data, x) per nonzero a lane takes

READING = "GPU MODE lectures — the lecture on sparsity (sparse formats and the kernels that use them)"

DESCRIPTION = f"""\
# Puzzle 26 — Sparse matrix times vector (CSR)

Compute `y = A @ x` where `A` is a sparse `rows x cols` matrix stored in **CSR** (compressed sparse row):
only the nonzeros are kept, row after row.

- `data[k]`, `indices[k]`: the value and the column of the k-th nonzero;
- `indptr[r] .. indptr[r+1] - 1`: the nonzeros of row `r` (an empty row has `indptr[r] == indptr[r+1]`).

So `y[r] = sum(data[k] * x[indices[k]] for k in range(indptr[r], indptr[r+1]))`.

**Example.**

```
A = [[10,  0,  0, -2],      data    = [10, -2, 3, 1, 4]
     [ 0,  0,  0,  0],      indices = [ 0,  3, 1, 2, 3]
     [ 0,  3,  1,  4]]      indptr  = [ 0,  2, 2, 5]          x = [1, 2, 3, 4]

y = [10*1 - 2*4,  0,  3*2 + 1*3 + 4*4] = [2, 0, 25]
```

Real sparse matrices (pruned weights, graphs, attention masks) have rows of wildly different lengths.
One *thread* per row is simple, but a warp then holds 32 rows and waits for the longest one while the
lanes with short rows idle, and its lanes read addresses far apart. Here each row gets a whole
**warp**: lane `l` takes nonzeros `start + l, start + l + 32, ...` (neighbouring lanes read neighbouring
`data`/`indices`), keeps a partial sum, and the warp adds the 32 partial sums with shuffles
(puzzle 21). A row of 300 nonzeros costs 10 steps instead of 300; a row of 2 leaves 30 lanes idle — the
price of the scheme.

**What's new:** irregular work: an indirection (`x[indices[k]]`, a gather), rows whose length you only
learn at run time, and mapping work so that no single thread carries a long row.

**Launch:** blocks of {TPB} threads, `ceil(rows / {ROWS_PER_BLOCK})` blocks: warp `w` of the grid computes row `w`
(warps past the last row do nothing). `data` and `x` are float32, `indptr` and `indices` int32; `y` is
written once per row. The longest row has {LONGEST} nonzeros.

**Read more:** {READING}
"""


def spec(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, x: np.ndarray, y: np.ndarray,
         rows: int) -> dict[str, np.ndarray]:
    out = np.zeros(rows, np.float64)
    for r in range(rows):
        k = slice(indptr[r], indptr[r + 1])
        # numba types float32 * float32 as float32: each product is rounded to float32 before the float64
        # accumulator adds it (the GPU does not fuse across the conversion), and so does this spec
        out[r] = (data[k] * x[indices[k]]).astype(np.float64).sum()
    return {"y": out.astype(np.float32)}


def _case(name: str, lengths, cols: int, rng: np.random.Generator, note: str, x=None, dense=None) -> Case:
    if dense is not None:
        dense = np.asarray(dense, np.float32)
        nz = [np.nonzero(row)[0] for row in dense]
        indices = np.concatenate(nz).astype(np.int32)
        data = np.concatenate([row[c] for row, c in zip(dense, nz)]).astype(np.float32)
        lengths = [c.size for c in nz]
    else:
        indices = np.concatenate([np.sort(rng.choice(cols, k, replace=False)) for k in lengths]
                                 + [np.zeros(0, np.int64)]).astype(np.int32)
        data = _nonzero(rng, indices.size).astype(np.float32)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    x = _nonzero(rng, cols).astype(np.float32) if x is None else np.asarray(x, np.float32)
    rows = len(lengths)
    buffers = {"indptr": indptr, "indices": indices, "data": data, "x": x,
               "y": np.full(rows, np.nan, np.float32), "rows": rows}
    step = LaunchStep("spmv", grid=-(-rows // ROWS_PER_BLOCK), block=TPB,
                      args=("indptr", "indices", "data", "x", "y", "rows"))
    return Case(name, buffers, (step,), note)


def _nonzero(rng: np.random.Generator, n: int) -> np.ndarray:
    """Integers in [-9, 9] without 0: products and sums stay exact in float32; every term counts."""
    return rng.integers(1, 10, n) * rng.choice([-1, 1], n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 26)
    example = [[10, 0, 0, -2], [0, 0, 0, 0], [0, 3, 1, 4]]
    skewed = np.where(rng.random(50) < 0.85, rng.integers(0, 6, 50), rng.integers(40, LONGEST + 1, 50))
    skewed[7] = LONGEST
    return (
        _case("worked example 3x4", None, 4, rng, "the example; 3 rows leave the block's 4th warp idle",
              x=[1, 2, 3, 4], dense=example),
        _case("one long row 1x400", [LONGEST], 400, rng, f"a single row of {LONGEST} nonzeros: 10 per lane"),
        _case("empty rows 6x10", [0, 3, 0, 0, 1, 0], 10, rng, "most rows have no nonzero: y must be 0 there"),
        _case("short rows 9x40", rng.integers(1, 8, 9), 40, rng, "1-7 nonzeros per row; 9 rows, 3 blocks"),
        _case("skewed 50x400", skewed, 400, rng, "85% of the rows have 0-5 nonzeros, the rest 40-300"),
    )


def spread_rows(limit: int = SPREAD) -> Rule:
    def check(s: RunStats) -> str | None:
        if s.global_reads_per_thread > limit:
            return (f"a thread makes {s.global_reads_per_thread} global reads; spreading the longest row "
                    f"({LONGEST} nonzeros) over its warp needs at most {limit}")
        return None

    return Rule(f"a row's work is spread over its warp: at most {limit} global reads per thread", check)




PUZZLE = Puzzle(
    slug="spmv-csr",
    number=26,
    title="Sparse matrix times vector (CSR)",
    chapter=5,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("spmv",),
    spec=spec,
    make_cases=make_cases,
    outputs=("y",),
    constraints=(
        max_global_writes_per_thread(1, "y"),
        no_atomics(),
    ),
    stars=(
        Star(2, "no thread carries a whole row: lanes share the nonzeros", (spread_rows(),)),
        Star(3, "the warp adds its partial sums with shuffles: no shared memory",
             (no_shared('the warp can add its partial sums with shuffles'),)),
    ),
    hints=(
        "`row = cuda.grid(1) // 32`, `lane = cuda.laneid`. Guard with `row < rows` — but keep all 32 lanes "
        "of a warp together: a whole warp is either in range or not.",
        "Lane `l` sums `data[k] * x[indices[k]]` for `k = start + l, start + l + 32, ...` below `end`. Then "
        "five `shfl_down_sync` steps put the row's total in lane 0.",
        "`for k in range(start + lane, end, 32): s += data[k] * x[indices[k]]`; shuffle-reduce `s`; "
        "`if lane == 0: y[row] = s`.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
BENCH_ROW = 64   # nonzeros per row at benchmark size: two trips of a warp's 32 lanes


def bench(n: int) -> Case:
    """About n nonzeros: a square matrix with BENCH_ROW random columns in every row."""
    rng = np.random.default_rng(8026)
    rows = max(1, n // BENCH_ROW)
    indices = np.sort(rng.integers(0, rows, (rows, BENCH_ROW), dtype=np.int32), axis=1).ravel()
    buffers = {"indptr": np.arange(0, rows * BENCH_ROW + 1, BENCH_ROW, dtype=np.int32), "indices": indices,
               "data": rng.standard_normal(indices.size, dtype=np.float32),
               "x": rng.standard_normal(rows, dtype=np.float32), "y": np.full(rows, np.nan, np.float32),
               "rows": rows}
    step = LaunchStep("spmv", grid=-(-rows // ROWS_PER_BLOCK), block=TPB,
                      args=("indptr", "indices", "data", "x", "y", "rows"))
    return Case(f"bench {rows}x{rows}, {BENCH_ROW} per row", buffers, (step,))


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
