"""Puzzle 35 — RMSNorm: a fused row reduction and rescale with a weight vector, one block per row."""

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
ITEMS = MAX_COLS // TPB  # the most columns one thread owns: size of a register cache for the row
EPS = 1e-6

READING = "Fused RMSNorm in Triton — pytorch-labs/applied-ai (the RMSNorm kernel and its benchmark)"

DESCRIPTION = f"""\
# Puzzle 35 — RMSNorm

RMSNorm (used in Llama, Mistral, Gemma...) rescales each row to unit root-mean-square, then applies a learned
per-column weight:

    rms[r]    = sqrt( mean_c x[r, c]^2 + eps )
    out[r, c] = x[r, c] / rms[r] * w[c]

**Example** (`eps` = {EPS:g}): `x = [3, -4, 0, 1]`, `w = [1, 0.5, 2, -1]`. Mean of squares
`(9 + 16 + 0 + 1) / 4 = 6.5`, `rms = 2.5495`, so `x / rms = [1.1767, -1.5689, 0, 0.3922]` and
`out = [1.1767, -0.7845, 0, -0.3922]`.

In PyTorch this is several kernels (square, mean, rsqrt, two multiplies), each reading and writing the
whole tensor. A fused kernel reads `x` and `w` once and writes `out` once:

```
block r (64 threads)       columns t, t+64, t+128, t+192 for thread t
 read x[r, c] ──► keep in registers (cuda.local.array) ──► sum of squares ──► shared tree ──► rms
                                                    └─────────────────────────────────────► out = x / rms * w
```

**What's new:** fusion of a reduction with the elementwise work that needs its result, and registers as
a cache: each thread keeps its (at most {ITEMS}) values of the row in a
`cuda.local.array({ITEMS}, numba.float32)`, so the second use needs no second trip to global memory.

**Launch:** one block of {TPB} threads per row; `x`, `out` float32 `(rows, cols)` with `cols <= {MAX_COLS}`,
`w` float32 `(cols,)`, `eps` a float argument. Divide by the number of **columns** (not by the block size).
Constraints: at most {2 * ITEMS} reads of `x`, {ITEMS} of `w` and {ITEMS} writes of `out` per thread.
★★ reads `x` only once. Tolerance: rtol 1e-5, atol 1e-6.

**Read more:** {READING}
"""


def spec(x: np.ndarray, w: np.ndarray, out: np.ndarray, eps: float) -> dict[str, np.ndarray]:
    x64 = x.astype(np.float64)
    rms = np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + eps)
    return {"out": (x64 / rms * w.astype(np.float64)).astype(np.float32)}


def _case(name: str, x: np.ndarray, w: np.ndarray, note: str) -> Case:
    x = np.asarray(x, dtype=np.float32)
    w = np.asarray(w, dtype=np.float32)
    assert x.ndim == 2 and x.shape[1] <= MAX_COLS and w.shape == (x.shape[1],)
    out = np.full(x.shape, np.nan, dtype=np.float32)
    step = LaunchStep("rmsnorm_kernel", grid=x.shape[0], block=TPB, args=("x", "w", "out", "eps"))
    return Case(name, {"x": x, "w": w, "out": out, "eps": EPS}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 35)

    def weights(n: int) -> np.ndarray:
        return rng.uniform(0.5, 1.5, n) * rng.choice([-1, 1], n)

    scales = rng.normal(0, 1, (4, 256)) * np.array([[1e-3], [1.0], [30.0], [1e3]])
    rows, cols = size(rng, 3, 8), size(rng, 8, 56, multiple_of=8)
    return (
        _case("worked example 1x4", [[3, -4, 0, 1]], [1, 0.5, 2, -1], "the example from the description"),
        _case("random 4x64", rng.normal(0, 1, (4, 64)), weights(64), "one column per thread"),
        _case("random 3x200", rng.normal(0.5, 2, (3, 200)), weights(200),
              "200 columns: divide by 200, not by 64 or 256; 56 threads own only 3"),
        _case("scales 4x256", scales, weights(256),
              "rows of very different size; in the 1e-3 row eps is as large as the mean square: "
              "leave it out and that row is off by about 40%"),
        _case("one column 3x1", [[2.0], [-0.5], [7.0]], [-3.0], "out = sign(x) * w, up to eps"),
        _case(f"random {rows}x{cols}", rng.normal(0, 3, (rows, cols)), weights(cols), "fewer columns than threads"),
    )


PUZZLE = Puzzle(
    slug="rmsnorm",
    number=35,
    title="RMSNorm",
    chapter=7,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("rmsnorm_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(2 * ITEMS, "x"),
        max_global_reads_per_thread(ITEMS, "w"),
        max_global_writes_per_thread(ITEMS, "out"),
        must_use_shared(),
        no_atomics(),
    ),
    stars=(
        Star(2, "one read of x: keep your columns in registers between the two uses",
             (max_global_reads_per_thread(ITEMS, "x"),)),
        Star(3, "coalesced, and no bank conflicts in the reduction",
             (ideal_coalescing(), no_bank_conflicts())),
    ),
    hints=(
        "Pass 1: for `k in range(ITEMS)`, column `c = t + k * TPB`; if `c < cols`, load `x[r, c]` into "
        "`vals[k]` and add its square to a running sum. Tree-reduce the sums in shared memory.",
        "After the tree: `inv = 1 / math.sqrt(shared[0] / cols + eps)`. Every thread reads `shared[0]`; no "
        "thread writes `shared` afterwards, so no further barrier is needed.",
        "Pass 2, from registers: `for k in range(ITEMS)`: if `c < cols`, `out[r, c] = vals[k] * inv * w[c]`.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-6,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n elements: rows of MAX_COLS columns (the widest the puzzle allows), one block per row."""
    rng = np.random.default_rng(8035)
    cols = min(MAX_COLS, n)
    x = rng.standard_normal((max(1, n // cols), cols), dtype=np.float32)
    return _case(f"bench {x.shape[0]}x{cols}", x, rng.uniform(0.5, 1.5, cols), "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
