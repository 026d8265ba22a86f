"""Puzzle 40 — Int8 matmul: int8 inputs, exact integer accumulation, float scales applied once at the end."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
)

TILE = 16                # the block is TILE x TILE threads; shared tiles are TILE x TILE int8
K_MAX = 64               # the longest inner dimension among the cases
TILE_READS = K_MAX // TILE   # reads of `a` (and of `b`) per thread when both are staged tile by tile

READING = ("*LLM.int8(): 8-bit Matrix Multiplication for Transformers at Scale* (2022) — Dettmers et al., "
           "section 2 (absmax quantisation, vector-wise scales); and *A Visual Guide to Quantization* — "
           "Maarten Grootendorst")

DESCRIPTION = f"""\
# Puzzle 40 — Int8 matmul with scales

Quantised inference stores a weight matrix as small integers plus a few floats that say how big a step
is. Here both operands are **int8** (whole numbers from -128 to 127) and each comes with its own scales:
`scale_a[m]` for every row of `a`, `scale_b[n]` for every column of `b` (the way LLM.int8() quantises
activations by row and weights by column). Compute

    c[m, n] = ( sum over k of a[m, k] * b[k, n] ) * scale_a[m] * scale_b[n]        (float32)

The sum is done **in integers** (an int32 accumulator on a GPU) and is exact; the two scales are applied
once per output element, at the very end.

**Example.** `a = [[1, -2], [3, 4]]`, `b = [[5, 6], [7, -8]]`, `scale_a = [0.5, 0.25]`,
`scale_b = [0.1, 2.0]`:

```
integer products        a @ b = [[ 1*5 + -2*7,  1*6 + -2*-8 ],   = [[ -9,  22 ],
                                 [ 3*5 +  4*7,  3*6 +  4*-8 ]]      [ 43, -14 ]]
times scale_a[m] * scale_b[n]:  [[ -9*0.5*0.1,   22*0.5*2.0 ],   = [[ -0.45,  22.0 ],
                                 [ 43*0.25*0.1, -14*0.25*2.0 ]]     [  1.075, -7.0 ]]
```

**Why the scales can wait.** `scale_a[m]` is the same for the whole row of `a` and `scale_b[n]` for the
whole column of `b`, so they factor out of the sum: one float multiply per output instead of two per
product, and the inner loop is pure integer math (what int8 tensor cores do).

**Mind the range.** A product of two int8 values can reach 128 * 128 = 16384, which no longer fits in
int8 or, after a few additions, in int16 (max 32767). Widen every value to int32 before multiplying and
keep the running sum in a wide integer. One case uses only values near -128 and 127 to make sure.

**What's new:** mixed-type arithmetic — int8 storage, integer accumulation, a float epilogue. The tiling is
the shared-memory matmul you know (puzzle 14): note that an int8 tile of {TILE}x{TILE} is only
{TILE * TILE} bytes, a quarter of the float32 one.

```
                 b (K x N, int8)        block (bx, by) computes the {TILE}x{TILE} tile of c
                 +-----+                at rows by*{TILE}.., columns bx*{TILE}..; thread (tx, ty)
                 | tb  |  <- k0..k0+{TILE - 1}      owns c[by*{TILE} + ty, bx*{TILE} + tx]
  a (M x K)      +-----+
  +----+----+    +-----+                for k0 in 0, {TILE}, 2*{TILE}, ...:
  | ta |    | -> |  c  |                    load ta, tb (zero past the edges), sync,
  +----+----+    +-----+                    add {TILE} integer products, sync
```

**Launch:** a 2D grid of `(ceil(N/{TILE}), ceil(M/{TILE}))` blocks of `({TILE}, {TILE})` threads; `x` is the
column, `y` the row. None of M, N, K is a multiple of {TILE} in most cases. Each thread writes `c` at most
once. For ★★ stage `a` and `b` through shared memory: at most {TILE_READS} reads of each per thread
(K is at most {K_MAX}).

**Read more:** {READING}
"""


def spec(a: np.ndarray, b: np.ndarray, scale_a: np.ndarray, scale_b: np.ndarray,
         c: np.ndarray) -> dict[str, np.ndarray]:
    acc = a.astype(np.int64) @ b.astype(np.int64)          # exact, like the int32 accumulator
    out = acc.astype(np.float32) * scale_a[:, None] * scale_b[None, :]
    return {"c": out.astype(np.float32)}


def _case(name: str, a: np.ndarray, b: np.ndarray, scale_a: np.ndarray, scale_b: np.ndarray,
          note: str) -> Case:
    a = np.asarray(a, dtype=np.int8)
    b = np.asarray(b, dtype=np.int8)
    m, k = a.shape
    k2, n = b.shape
    assert k == k2 and k <= K_MAX, (k, k2)
    buffers = {
        "a": a,
        "b": b,
        "scale_a": np.asarray(scale_a, dtype=np.float32),
        "scale_b": np.asarray(scale_b, dtype=np.float32),
        "c": np.full((m, n), np.nan, dtype=np.float32),
    }
    grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)
    args = ("a", "b", "scale_a", "scale_b", "c")
    step = LaunchStep("int8_matmul", grid=grid, block=(TILE, TILE), args=args)
    return Case(name, buffers, (step,), note)


def _int8(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Random int8 values over the whole range, never 0 (a zero hides a wrong index)."""
    v = rng.integers(1, 129, shape) * rng.choice([-1, 1], shape)
    return np.clip(v, -128, 127)


def _scales(rng: np.random.Generator, n: int) -> np.ndarray:
    """Distinct positive scales spread over two decades, so a row scale used as a column scale shows."""
    return (10.0 ** rng.uniform(-3, -1, n)).astype(np.float32)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 40)
    extreme_a = rng.choice(np.array([-128, -127, 127], dtype=np.int64), (17, K_MAX))
    extreme_b = rng.choice(np.array([-128, -127, 127], dtype=np.int64), (K_MAX, 20))
    extreme_a[0, :] = -128                      # row 0 times column 0: 64 * 16384 = 1,048,576
    extreme_b[:, 0] = -128
    m, k, n = (size(rng, 33, 47), size(rng, 33, K_MAX - 1, not_multiple_of=TILE),
               size(rng, 33, 47))
    return (
        _case("worked example 2x2x2", [[1, -2], [3, 4]], [[5, 6], [7, -8]], [0.5, 0.25], [0.1, 2.0],
              "the example from the description"),
        _case(f"random M={m} K={k} N={n}", _int8(rng, (m, k)), _int8(rng, (k, n)), _scales(rng, m),
              _scales(rng, n), "no dimension is a multiple of 16: partial tiles in every direction"),
        _case("extreme values M=17 K=64 N=20", extreme_a, extreme_b, _scales(rng, 17), _scales(rng, 20),
              "only -128, -127 and 127: an int8 or int16 accumulator overflows here"),
        _case("one token M=1 K=33 N=24", _int8(rng, (1, 33)), _int8(rng, (33, 24)), _scales(rng, 1),
              _scales(rng, 24), "a single row (decode step): 15 of the 16 thread rows have nothing to write"),
        _case("K=1, M=3 N=5", _int8(rng, (3, 1)), _int8(rng, (1, 5)), _scales(rng, 3), _scales(rng, 5),
              "an inner dimension of 1: one partial tile of k"),
        _case("square M=K=N=32", _int8(rng, (32, 32)), _int8(rng, (32, 32)), _scales(rng, 32),
              _scales(rng, 32), "exact multiples of the tile: no edge at all"),
    )


PUZZLE = Puzzle(
    slug="int8-matmul",
    number=40,
    title="Int8 matmul with scales",
    chapter=7,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("int8_matmul",),
    spec=spec,
    make_cases=make_cases,
    outputs=("c",),
    constraints=(
        max_global_writes_per_thread(1, "c"),
        max_global_reads_per_thread(1, "scale_a"),
        max_global_reads_per_thread(1, "scale_b"),
        no_atomics(),
    ),
    stars=(
        Star(2, f"tiled: a and b go through shared memory, at most {TILE_READS} reads of each per thread",
             (must_use_shared(), max_global_reads_per_thread(TILE_READS, "a"),
              max_global_reads_per_thread(TILE_READS, "b"))),
        Star(3, "no shared-memory bank conflicts", (no_bank_conflicts(),)),
    ),
    hints=(
        "Start from your tiled matmul (puzzle 14) with int8 shared tiles: "
        "`cuda.shared.array((TILE, TILE), numba.int8)`. Out-of-range elements load as 0, which adds nothing.",
        "Widen before you multiply: `acc += numba.int32(ta[ty, k]) * numba.int32(tb[k, tx])` with `acc = 0` "
        "before the loop over tiles. Two `cuda.syncthreads()` per tile: after loading, and before the next "
        "load overwrites what others still read.",
        "After the last tile, inside `if row < M and col < N:`, write "
        "`c[row, col] = numba.float32(acc) * scale_a[row] * scale_b[col]`.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-6,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n multiply-adds: square m = n_cols with the longest inner dimension the puzzle allows, K_MAX."""
    rng = np.random.default_rng(8040)
    side = max(1, int((n / K_MAX) ** 0.5))
    a, b = _int8(rng, (side, K_MAX)), _int8(rng, (K_MAX, side))
    return _case(f"bench {side}x{K_MAX} @ {K_MAX}x{side}", a, b, _scales(rng, side), _scales(rng, side),
                 "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
