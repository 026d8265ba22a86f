"""Puzzle 39 — fp16 inputs, fp32 accumulation: a half-precision matrix-vector product summed in float32."""

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

TPB = 128
MAX_COLS = 2048
ITEMS = MAX_COLS // TPB

READING = ("*Mixed Precision Training* (2017) — Micikevicius et al., section 3.2: products of fp16 values "
           "accumulated into fp32")

DESCRIPTION = f"""\
# Puzzle 39 — fp16 in, fp32 accumulate

Generating one token with a large language model is dominated by matrix-vector products with the weights,
which are stored in 16-bit floats to halve the bytes read. Compute `y = W @ x`:

    y[r] = sum_c  W[r, c] * x[c]          W: float16 (rows, cols), x: float16 (cols,), y: float32 (rows,)

float16 has 11 significant bits and a largest value of 65504. Its steps grow with the number: between 1024
and 2048 they are 1, between 2048 and 4096 they are 2. So in float16

    2048 + 1 = 2048          (2049 is not representable; it rounds back)

and a loop adding 4096 ones stops at 2048. A sum that passes 65504 becomes `inf`. Storing weights in fp16 is
fine; **adding up** in fp16 is not. Do as tensor cores do: convert each input to float32
(`numba.float32(W[r, c])`), multiply and accumulate in float32 — the product of two fp16 numbers is exact in
float32 — and keep float32 in shared memory for the block's reduction.

**Example:** `W = [[1, 2, 3, 4], [2048, 1, 1, 1]]`, `x = [1, 1, 1, 1]` (all float16) gives `y = [10, 2051]`.
Accumulated in float16, the second row comes out 2048, 2050 or 2052 depending on the order of the
additions — never 2051.

Cases here are chosen so that fp16 accumulation fails: one has row sums near 80,000 (fp16: `inf`), others
lose digits. The tolerance (rtol 1e-5, atol 1e-4) is what float32 accumulation easily meets.

```
block r (128 threads):  thread t: acc = sum of float32(W[r, c]) * float32(x[c]) for c = t, t+128, ...
                        shared float32[128] ──► tree sum ──► y[r]
```

**What's new:** mixed precision: the storage type and the arithmetic type of a kernel are separate choices.

**Launch:** one block of {TPB} threads per row, `cols <= {MAX_COLS}`; at most {ITEMS} reads of `W` and of `x`
per thread, one write of `y`.

**Read more:** {READING}
"""


def spec(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    return {"y": (W.astype(np.float64) @ x.astype(np.float64)).astype(np.float32)}


def _case(name: str, W: np.ndarray, x: np.ndarray, note: str) -> Case:
    W = np.asarray(W, dtype=np.float16)
    x = np.asarray(x, dtype=np.float16)
    rows, cols = W.shape
    assert cols <= MAX_COLS and x.shape == (cols,) and np.isfinite(W).all() and np.isfinite(x).all()
    y = np.full(rows, np.nan, dtype=np.float32)
    step = LaunchStep("gemv_fp16_kernel", grid=rows, block=TPB, args=("W", "x", "y"))
    return Case(name, {"W": W, "x": x, "y": y}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 39)
    # cancellation: integer terms of +-200..250 that mostly cancel, then small multiples of 1/128 that carry
    # the answer. Every product and partial sum is a multiple of 2^-7 below 2^17, so float32 sums them exactly
    # in any order; an fp16 running sum (steps of 0.5 near 1000) drops the small terms.
    big = rng.integers(200, 251, (3, 512)) * np.where(np.arange(512) % 2 == 0, 1, -1)
    cancel_W = np.concatenate([big, rng.integers(1, 7, (3, 512)) / 64], axis=1)
    cancel_x = np.concatenate([np.ones(512), rng.choice([0.5, 1.0], 512)])
    cols = size(rng, 264, 504, multiple_of=16, not_multiple_of=TPB)   # whole 32-byte sectors of fp16
    return (
        _case("worked example 2x4", [[1, 2, 3, 4], [2048, 1, 1, 1]], [1, 1, 1, 1],
              "the example from the description"),
        _case("random 4x1024", rng.normal(0, 1, (4, 1024)), rng.normal(0, 1, 1024),
              "ordinary weights: fp16 accumulation is already off by ~1e-3"),
        _case("overflow 3x2048", rng.uniform(4, 8, (3, 2048)), rng.uniform(4, 8, 2048),
              "every product 16..64, row sums near 80,000: past fp16's largest value, 65504"),
        _case("cancellation 3x1024", cancel_W, cancel_x,
              "large terms cancel; the small ones that remain vanish next to an fp16 running sum "
              "(float32 is exact here)"),
        _case(f"random 5x{cols}", rng.normal(0, 1, (5, cols)), rng.normal(0, 1, cols),
              f"{cols} columns: not a multiple of the block"),
        _case("one column 3x1", [[3.5], [-0.25], [1000]], [2.0], "a single product per row"),
    )


PUZZLE = Puzzle(
    slug="fp16-accumulate",
    number=39,
    title="fp16 in, fp32 accumulate",
    chapter=7,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("gemv_fp16_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("y",),
    constraints=(
        max_global_reads_per_thread(ITEMS, "W"),
        max_global_reads_per_thread(ITEMS, "x"),
        max_global_writes_per_thread(1, "y"),
        must_use_shared(),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced: a warp reads 32 neighbouring weights of a row at a time", (ideal_coalescing(),)),
        Star(3, "no bank conflicts in the reduction", (no_bank_conflicts(),)),
    ),
    hints=(
        "Start the accumulator as `acc = numba.float32(0.0)` and convert before multiplying: "
        "`acc += numba.float32(W[r, c]) * numba.float32(x[c])` for `c in range(t, cols, TPB)`.",
        "The shared array for the reduction is `cuda.shared.array(TPB, numba.float32)` — a float16 shared "
        "array would round every partial sum back to fp16.",
        "Tree-reduce as in puzzle 33 and let thread 0 write `y[r] = shared[0]`.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-4,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n weights: rows of MAX_COLS fp16 columns (the widest the puzzle allows), one block per row."""
    rng = np.random.default_rng(8039)
    cols = min(MAX_COLS, n)
    W = rng.standard_normal((max(1, n // cols), cols), dtype=np.float32)
    return _case(f"bench {W.shape[0]}x{cols}", W, rng.standard_normal(cols), "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
