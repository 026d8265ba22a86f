"""Puzzle 33 — Softmax in three passes: row max, sum of exponentials, normalise; one block per row."""

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

TPB = 64                 # threads per block; one block per row
MAX_COLS = 256           # the widest row in the cases
ITEMS = MAX_COLS // TPB  # the most elements one thread handles in a pass

READING = "Triton tutorials — *Fused Softmax* (triton-lang.org, getting-started tutorial 02)"

DESCRIPTION = f"""\
# Puzzle 33 — Softmax, three passes

Softmax turns a row of scores (logits) into probabilities: every output is positive and each row sums to 1.

    out[r, c] = exp(x[r, c] - m) / sum_j exp(x[r, j] - m)       where m = max_j x[r, j]

**Example:** the row `[1, 3, 2, 3]` has `m = 3`; `exp([-2, 0, -1, 0]) = [0.135, 1, 0.368, 1]`, sum 2.503,
so `out = [0.054, 0.399, 0.147, 0.399]`.

Subtracting `m` changes nothing mathematically, but without it `exp(100)` overflows float32 (anything above
about 88.7 does) and the row becomes `inf / inf = nan`. One of the cases has logits around 100.

One block of {TPB} threads owns one row. A row can be longer than the block, so each thread walks the row
with a stride of {TPB} (thread t takes columns t, t+{TPB}, t+{2 * TPB}, ...), which keeps a warp's loads
side by side in memory:

```
pass 1:  thread max over its columns  ──► shared[t] ──► tree reduction (max) ──► m for everyone
pass 2:  thread sum of exp(x - m)     ──► shared[t] ──► tree reduction (sum) ──► s for everyone
pass 3:  out[r, c] = exp(x[r, c] - m) / s    for the thread's columns

tree reduction over 8 slots:  [a b c d e f g h] -> [a+e b+f c+g d+h] -> [.. ..] -> [total]
                              (stride 4, 2, 1; cuda.syncthreads() after every level)
```

Read the result of a reduction (`shared[0]`) and `cuda.syncthreads()` **before** reusing the shared array
for the next reduction, or a fast thread overwrites slot 0 while a slow one is still reading it.

**What's new:** a block-wide reduction inside a larger kernel, used twice, and numerical stability.

**Launch:** one block of {TPB} threads per row (`grid = rows`); `x` and `out` are float32 `(rows, cols)`
with `cols <= {MAX_COLS}`. Each pass reads each element once: at most {3 * ITEMS} reads of `x` and
{ITEMS} writes of `out` per thread. Tolerance: rtol 1e-5, atol 1e-7.

**Read more:** {READING}
"""


def spec(x: np.ndarray, out: np.ndarray) -> dict[str, np.ndarray]:
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    return {"out": (e / e.sum(axis=1, keepdims=True)).astype(np.float32)}


def _case(name: str, x: np.ndarray, note: str) -> Case:
    x = np.asarray(x, dtype=np.float32)
    assert x.ndim == 2 and x.shape[1] <= MAX_COLS
    out = np.full(x.shape, np.nan, dtype=np.float32)
    step = LaunchStep("softmax_kernel", grid=x.shape[0], block=TPB, args=("x", "out"))
    return Case(name, {"x": x, "out": out}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 33)
    rows, cols = size(rng, 3, 8), size(rng, 8, 56, multiple_of=8)
    peaked = rng.normal(0, 1, (3, 200))
    peaked[0, 199] = 9.0          # the maximum sits in the last, partial stretch of the row
    peaked[1, 0] = 9.0
    peaked[2, 130] = 9.0
    return (
        _case("worked example 1x4", [[1, 3, 2, 3]], "the example from the description"),
        _case("random 4x64", rng.normal(0, 2, (4, 64)), "one element per thread"),
        _case("random 3x200", peaked,
              "200 columns: threads take 3 or 4 each; each row's maximum is in a different thread"),
        _case("large logits 2x256", rng.normal(100, 5, (2, 256)),
              "logits near 100: exp without subtracting the max overflows float32"),
        _case("one column 5x1", rng.normal(0, 3, (5, 1)),
              "every output is 1; 63 threads of each block are idle"),
        _case(f"very negative {rows}x{cols}", rng.normal(-120, 8, (rows, cols)),
              "logits near -120: with a max that starts at 0 instead of -inf every exp underflows to 0"),
        _case("one spike per row 5x128", _spiked(rng, 5, 128, (63, 1, 41, 2, 127)),
              "each row has one logit 100 above the rest, at columns 63, 1, 41, 2 and 127: a max tree that "
              "skips any thread's partial subtracts too small a max, and exp(100) overflows"),
    )


def _spiked(rng: np.random.Generator, rows: int, cols: int, at: tuple[int, ...]) -> np.ndarray:
    """Normal logits with one logit per row raised 100 above the row's others, at column ``at[row]``."""
    x = rng.normal(0, 1, (rows, cols))
    x[np.arange(rows), at] = x.max(axis=1) + 100
    return x


PUZZLE = Puzzle(
    slug="softmax-three-pass",
    number=33,
    title="Softmax, three passes",
    chapter=7,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("softmax_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(3 * ITEMS, "x"),
        max_global_writes_per_thread(ITEMS, "out"),
        must_use_shared(),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced: a warp reads 32 neighbouring columns at a time (stride by the block, not chunks)",
             (ideal_coalescing(),)),
        Star(3, "no bank conflicts in the reductions", (no_bank_conflicts(),)),
    ),
    hints=(
        "Pass 1: `m = -math.inf`, then `for c in range(t, cols, TPB): m = max(m, x[r, c])`. Put `m` in "
        "`shared[t]` and reduce; a thread with no columns contributes -inf to the max and 0 to the sum.",
        "The reduction: `stride = TPB // 2`; `while stride > 0: if t < stride: shared[t] = max(shared[t], "
        "shared[t + stride])`; `cuda.syncthreads()`; `stride //= 2`. Then `row_max = shared[0]`, and "
        "`cuda.syncthreads()` before anyone writes `shared` again.",
        "Pass 2 is the same with `acc += math.exp(x[r, c] - row_max)` and `+` in the tree; pass 3 writes "
        "`out[r, c] = math.exp(x[r, c] - row_max) / total`. Two small `@cuda.jit(device=True)` helpers keep "
        "the two reductions readable.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-7,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n elements: rows of MAX_COLS columns (the widest the puzzle allows), one block per row."""
    cols = min(MAX_COLS, n)
    x = np.random.default_rng(8033).standard_normal((max(1, n // cols), cols), dtype=np.float32)
    return _case(f"bench {x.shape[0]}x{cols}", x * np.float32(3), "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
