"""Puzzle 34 — Online softmax: max and sum in one pass over the row (running rescaling), then write."""

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

TPB = 64
MAX_COLS = 256
ITEMS = MAX_COLS // TPB

READING = ("*FlashAttention* (2022) — Dao et al., section 3.1: softmax computed block by block with a "
           "running max and a rescaled running sum")

DESCRIPTION = f"""\
# Puzzle 34 — Online softmax

The same row softmax as puzzle 33, but reading `x` only **twice**: the maximum and the sum of exponentials
come out of a single pass. This is the trick that lets FlashAttention compute softmax over a row it never
holds in full.

Keep a running pair `(m, d)`: the largest value seen so far and the sum of `exp(value - m)` so far. A new
value `v` updates it as

    m_new = max(m, v)
    d     = d * exp(m - m_new) + exp(v - m_new)      # old terms were measured against the old max: rescale
    m     = m_new

**Example:** the row `[1, 3, 2, 3]`, starting from `(m, d) = (-inf, 0)`:

```
v = 1:  m = 1,  d = 0·exp(-inf)      + exp(0)  = 1
v = 3:  m = 3,  d = 1·exp(1 - 3)     + exp(0)  = 1.135
v = 2:  m = 3,  d = 1.135·exp(0)     + exp(-1) = 1.503
v = 3:  m = 3,  d = 1.503            + exp(0)  = 2.503       same m and sum as puzzle 33's two passes
```

Two partial results `(m1, d1)` and `(m2, d2)` — from two threads — merge the same way:

    m = max(m1, m2),   d = d1 * exp(m1 - m) + d2 * exp(m2 - m)

so the block reduces pairs in shared memory (two arrays, `m` and `d`) instead of single numbers. Watch the
empty partial `(-inf, 0)` of a thread that got no columns: `exp(-inf - (-inf))` is `exp(nan)`. Merge it by
keeping the other side unchanged. One case has a single column, so 63 threads of each block are empty.

**What's new:** a reduction whose state is a pair, and whose merge rescales — one pass instead of two.

**Launch:** as in puzzle 33: one block of {TPB} threads per row, float32 `(rows, cols)` with
`cols <= {MAX_COLS}`. At most {2 * ITEMS} reads of `x` per thread (one pass for `(m, d)`, one to write) and
{ITEMS} writes of `out`. Tolerance: rtol 1e-5, atol 1e-7.

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
    step = LaunchStep("online_softmax_kernel", grid=x.shape[0], block=TPB, args=("x", "out"))
    return Case(name, {"x": x, "out": out}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 34)
    rising = np.sort(rng.normal(0, 4, (3, 256)), axis=1)   # each thread's max grows at every column it reads
    rows, cols = size(rng, 3, 8), size(rng, 8, 56, multiple_of=8)
    return (
        _case("worked example 1x4", [[1, 3, 2, 3]], "the example from the description"),
        _case("random 4x200", rng.normal(0, 3, (4, 200)), "columns not a multiple of the block"),
        _case("rising rows 3x256", rising,
              "sorted rows: the running max changes at every step, so a missing rescale is large"),
        _case("large logits 2x256", rng.normal(100, 6, (2, 256)), "exp(x) without the max overflows float32"),
        _case("very negative 6x24", rng.normal(-120, 8, (6, 24)),
              "logits near -120: with a max that starts at 0 instead of -inf every exp underflows to 0"),
        _case("one column 5x1", rng.normal(0, 3, (5, 1)),
              "63 empty threads per block: their (-inf, 0) must merge"),
        _case(f"random {rows}x{cols}", rng.normal(-50, 20, (rows, cols)),
              "fewer columns than threads, negative logits"),
    )


PUZZLE = Puzzle(
    slug="online-softmax",
    number=34,
    title="Online softmax",
    chapter=7,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("online_softmax_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(2 * ITEMS, "x"),
        max_global_writes_per_thread(ITEMS, "out"),
        must_use_shared(),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced: threads stride through the row by the block size", (ideal_coalescing(),)),
        Star(3, "no bank conflicts in the pair reduction", (no_bank_conflicts(),)),
    ),
    hints=(
        "Each thread first folds its own columns (`for c in range(t, cols, TPB)`) into `(m, d)` with the "
        "update rule. Only then does the block merge the 64 pairs.",
        "Shared arrays `sm` and `sd` of 64 float32. In the tree, thread `t < stride` merges slot "
        "`t + stride` into slot `t`: `m = max(m1, m2)`, `d = d1 * exp(m1 - m) + d2 * exp(m2 - m)` — but "
        "if `m2 == -inf` keep slot t as it is, and if `m1 == -inf` just copy slot `t + stride`.",
        "After the tree, `row_max = sm[0]`, `total = sd[0]`; the second pass writes "
        "`out[r, c] = math.exp(x[r, c] - row_max) / total`.",
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
    x = np.random.default_rng(8034).standard_normal((max(1, n // cols), cols), dtype=np.float32)
    return _case(f"bench {x.shape[0]}x{cols}", x * np.float32(3), "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
