"""Puzzle 13 — Axis sum: one block per row; threads stride over the columns, then reduce in shared memory."""

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
)

TPB = 64          # threads per block; one block per row
MAX_COLS = 200    # the widest matrix of any test case
MAX_READS = -(-MAX_COLS // TPB)   # 4: each thread reads its share of the widest row, no more

READING = ("GPU MODE lectures — lecture 9, *Reductions* (Mark Saroufim): a block-wide sum, first per thread "
           "over a strided loop, then as a tree in shared memory")

DESCRIPTION = f"""\
# Puzzle 13 — Axis sum

Sum each row of a `rows × cols` matrix — NumPy's `a.sum(axis=1)`:

    out[r] = a[r, 0] + a[r, 1] + ... + a[r, cols-1]

**Example.** `a = [[1, 2, 3, 4, 5], [-1, 0.5, 2, 2, -3], [10, 20, 30, 40, 50]]` gives
`out = [15, 0.5, 150]`.

Each row gets **one block** of {TPB} threads (block `r` sums row `r`). A row can be wider than the block, so
each thread first adds up its share of the row with a *block-stride loop* — thread `t` takes columns
`t, t + {TPB}, t + {2 * TPB}, ...` — and then the block adds the {TPB} per-thread sums with a tree, as in
puzzle 10:

```
row r, cols = 150:        columns  0 .. 63 | 64 .. 127 | 128 .. 149
thread t:                          t       | t + 64    | t + 128 (t < 22)
                                   \\_________|__________/
                                   acc_t in a register  ->  s[t]   (shared)
                         tree over s[0..63]  ->  thread 0 writes out[r]
```
Striding by the block size keeps a warp's 32 reads side by side in memory (coalesced, ★★). Handing each
thread a *contiguous chunk* of the row instead gives the same sum, but a warp's reads land
`cols / {TPB}` elements apart.

**What's new:** a reduction along one axis of a matrix, mapping blocks to rows, and a loop that lets a
fixed-size block handle rows of any length.

**Launch:** a grid of `rows` blocks of {TPB} threads; `cols` is passed to the kernel (up to {MAX_COLS}).
No thread may read more than {MAX_READS} elements of `a` (its share of the widest row) or write more than
once; the kernel must use shared memory; no atomics.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, cols: int) -> dict[str, np.ndarray]:
    return {"out": a.astype(np.float64).sum(axis=1).astype(np.float32)}


def _case(name: str, a: np.ndarray, note: str = "") -> Case:
    a = np.ascontiguousarray(a, dtype=np.float32)
    rows, cols = a.shape
    assert cols <= MAX_COLS
    out = np.full(rows, np.nan, dtype=np.float32)
    step = LaunchStep("row_sum_kernel", grid=rows, block=TPB, args=("out", "a", "cols"))
    return Case(name, {"out": out, "a": a, "cols": int(cols)}, (step,), note)


def _nonzero(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Values of magnitude 0.5..2 with random signs: a dropped or doubled term always shows."""
    return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 13)
    rows, cols = size(rng, 8, 16), size(rng, 65, 127)
    return (
        _case("worked example 3x5", np.array([[1, 2, 3, 4, 5], [-1, 0.5, 2, 2, -3], [10, 20, 30, 40, 50]]),
              "the example from the description: 59 idle threads per block"),
        _case("random 4x64", _nonzero(rng, (4, 64)), "one column per thread"),
        _case("random 5x200", _nonzero(rng, (5, 200)), "rows wider than the block: four loop trips"),
        _case(f"random {rows}x{cols}", _nonzero(rng, (rows, cols)), "two loop trips, the second partial"),
        _case("random 7x63", _nonzero(rng, (7, 63)), "one idle thread per block"),
        _case("1x1", np.array([[-4.5]]), "one row of one element"),
    )


PUZZLE = Puzzle(
    slug="axis-sum",
    number=13,
    title="Axis Sum",
    chapter=2,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("row_sum_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        must_use_shared(),
        max_global_reads_per_thread(MAX_READS, "a"),
        max_global_writes_per_thread(1),
        no_atomics(),
    ),
    stars=(
        # Rows of 5, 63 or 100 floats are not 32-byte aligned: the block-stride loop moves up to ~1.25x the
        # ideal sectors on these cases; contiguous per-thread chunks move 1.9-3.5x on the wide ones.
        Star(2, "coalesced: a warp reads neighbouring columns", (ideal_coalescing(1.5),)),
        Star(3, "a conflict-free tree: no shared-memory bank conflicts", (no_bank_conflicts(),)),
    ),
    hints=(
        "Split it in two: (1) each thread adds up some of the row's elements in a local variable; (2) the "
        "block adds up the TPB local sums through shared memory, as in puzzle 10.",
        "`r = cuda.blockIdx.x`, `t = cuda.threadIdx.x`; `acc = 0.0; for c in range(t, cols, TPB): "
        "acc += a[r, c]`; then `s[t] = acc` and `cuda.syncthreads()`.",
        "The tree: `stride = TPB // 2`; `while stride > 0: if t < stride: s[t] += s[t + stride]`; "
        "barrier; `stride //= 2`. Finally `if t == 0: out[r] = s[0]`.",
    ),
    reading=READING,
    # float32 sums of up to 200 values of size <= 2, in any order; a wrong term moves a sum by >= 0.5
    rtol=1e-5,
    atol=1e-3,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n elements: rows of MAX_COLS columns (the widest the puzzle allows), one block per row."""
    cols = min(MAX_COLS, n)
    a = np.random.default_rng(8013).standard_normal((max(1, n // cols), cols), dtype=np.float32)
    return _case(f"bench {a.shape[0]}x{cols}", a)


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
