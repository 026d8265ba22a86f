"""Puzzle 36 — LayerNorm: mean and variance of each row (numerically stable), then scale and shift."""

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
EPS = 1e-5

READING = ("Triton tutorials — *Layer Normalization* (triton-lang.org, getting-started tutorial 05): the "
           "forward kernel is this puzzle, one program per row")

DESCRIPTION = f"""\
# Puzzle 36 — LayerNorm

LayerNorm (GPT-2, BERT, most transformers before RMSNorm) centres each row, scales it to unit variance,
then applies a learned per-column scale `w` and shift `b`:

    mean[r]   = (1/cols) * sum_c x[r, c]
    var[r]    = (1/cols) * sum_c (x[r, c] - mean[r])^2          (the biased variance, as PyTorch uses)
    out[r, c] = (x[r, c] - mean[r]) / sqrt(var[r] + eps) * w[c] + b[c]

**Example** (`eps` = {EPS:g}): `x = [1, 2, 3, 6]`, `w = [1, 1, 2, 2]`, `b = [0, 0, 0, 1]`: mean 3,
variance `(4 + 1 + 0 + 9) / 4 = 3.5`, `sqrt(3.5 + eps) = 1.8708`, normalised `[-1.0690, -0.5345, 0, 1.6036]`,
`out = [-1.0690, -0.5345, 0, 4.2071]`.

**The trap.** `var = mean(x^2) - mean(x)^2` needs only one pass, and in float32 it is wrong whenever the
mean is large compared with the spread. A row of values `1000 ± 1` has `mean(x^2)` about 1,000,000, where a
float32 step is 0.0625; the variance (about 1) is what is left after subtracting two nearly equal numbers of
that size, and most of its digits are rounding noise. Some cases here have rows like that. Two stable ways:

```
two passes (over registers):  mean first ──► then sum of (x - mean)^2     -- reads x from memory once
Welford / parallel merge:     each thread keeps (count, mean, M2); two partials merge as
                              n = na + nb,  delta = mean_b - mean_a,
                              mean = mean_a + delta * nb / n,   M2 = M2a + M2b + delta^2 * na * nb / n
```

**What's new:** numerical stability of a reduction, not only its speed: the same formula can be exact on
paper and useless in float32.

**Launch:** one block of {TPB} threads per row; `x`, `out` float32 `(rows, cols)` with `cols <= {MAX_COLS}`;
`w`, `b` float32 `(cols,)`; `eps` a float argument. At most {2 * ITEMS} reads of `x` per thread and {ITEMS}
each of `w` and `b`, {ITEMS} writes of `out`. ★★ reads `x` once. Tolerance: rtol 1e-4, atol 1e-4.

**Read more:** {READING}
"""


def spec(x: np.ndarray, w: np.ndarray, b: np.ndarray, out: np.ndarray, eps: float) -> dict[str, np.ndarray]:
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    y = (x64 - mean) / np.sqrt(var + eps) * w.astype(np.float64) + b.astype(np.float64)
    return {"out": y.astype(np.float32)}


def _case(name: str, x: np.ndarray, w: np.ndarray, b: np.ndarray, note: str) -> Case:
    x = np.asarray(x, dtype=np.float32)
    w = np.asarray(w, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    assert x.ndim == 2 and x.shape[1] <= MAX_COLS and w.shape == b.shape == (x.shape[1],)
    out = np.full(x.shape, np.nan, dtype=np.float32)
    step = LaunchStep("layernorm_kernel", grid=x.shape[0], block=TPB, args=("x", "w", "b", "out", "eps"))
    return Case(name, {"x": x, "w": w, "b": b, "out": out, "eps": EPS}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 36)

    def affine(n: int) -> tuple[np.ndarray, np.ndarray]:
        return rng.uniform(0.5, 1.5, n) * rng.choice([-1, 1], n), rng.uniform(-1, 1, n)

    rows, cols = size(rng, 3, 8), size(rng, 8, 56, multiple_of=8)
    offset = rng.normal(0, 1, (4, 256)) + np.array([[1000.0], [-300.0], [50.0], [0.0]])
    return (
        _case("worked example 1x4", [[1, 2, 3, 6]], [1, 1, 2, 2], [0, 0, 0, 1],
              "the example from the description"),
        _case("random 4x64", rng.normal(0, 2, (4, 64)), *affine(64), "one column per thread"),
        _case("random 3x200", rng.normal(3, 2, (3, 200)), *affine(200),
              "divide by 200, not by the block size"),
        _case("large offsets 4x256", offset, *affine(256),
              "rows centred at 1000, -300, 50 and 0 with spread 1: mean(x^2) - mean(x)^2 falls apart"),
        _case("small variance 3x64", rng.normal(0, 1e-3, (3, 64)), *affine(64),
              "spread 1e-3: the variance (1e-6) is a tenth of eps, so 1 / sqrt(var + eps) and "
              "1 / (sqrt(var) + eps) differ threefold"),
        _case("one column 3x1", [[4.0], [-2.0], [0.5]], [2.0], [0.25], "variance 0: every output is b"),
        _case(f"random {rows}x{cols}", rng.normal(-1, 5, (rows, cols)), *affine(cols), "fewer columns than threads"),
    )


PUZZLE = Puzzle(
    slug="layernorm",
    number=36,
    title="LayerNorm",
    chapter=7,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("layernorm_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(2 * ITEMS, "x"),
        max_global_reads_per_thread(ITEMS, "w"),
        max_global_reads_per_thread(ITEMS, "b"),
        max_global_writes_per_thread(ITEMS, "out"),
        must_use_shared(),
        no_atomics(),
    ),
    stars=(
        Star(2, "one read of x: keep your columns in registers", (max_global_reads_per_thread(ITEMS, "x"),)),
        Star(3, "coalesced, and no bank conflicts in the reductions",
             (ideal_coalescing(), no_bank_conflicts())),
    ),
    hints=(
        "Load your columns (`c = t + k * TPB` for `k < ITEMS`, `c < cols`) into a `cuda.local.array(ITEMS, "
        "numba.float32)` and reduce their sum: that gives the mean.",
        "Barrier after reading `shared[0]`, then reduce `sum((v - mean)^2)` over the same registers — the "
        "subtraction happens before squaring, so nothing large cancels.",
        "`inv = 1 / math.sqrt(var + eps)`; `out[r, c] = (vals[k] - mean) * inv * w[c] + b[c]`.",
    ),
    reading=READING,
    rtol=1e-4,
    atol=1e-4,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n elements: rows of MAX_COLS columns (the widest the puzzle allows), one block per row."""
    rng = np.random.default_rng(8036)
    cols = min(MAX_COLS, n)
    x = rng.standard_normal((max(1, n // cols), cols), dtype=np.float32) * np.float32(2)
    w, b = rng.uniform(0.5, 1.5, cols), rng.uniform(-1, 1, cols)
    return _case(f"bench {x.shape[0]}x{cols}", x, w, b, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
