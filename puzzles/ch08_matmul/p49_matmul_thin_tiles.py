"""Puzzle 49 — Thin shared tiles: load a 32x16 and a 16x32 slice per step, measure 8 FLOPs per byte."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_writes_per_thread,
    must_use_shared,
    no_bank_conflicts,
    shared_memory_budget,
)

from .matrices import generator, random_cases, spec, square_bench, tiled_case
from .rules import MIN_FLOPS, float32_only, load_intensity

TILE = 32                        # the block computes a TILE x TILE tile of c, one output per thread
BK = 16                          # the depth of one k-slice
BUDGET = 2 * TILE * BK * 4       # 4096 bytes: one 32x16 slice of a and one 16x32 slice of b
INTENSITY = TILE / 4             # 8 FLOPs per byte loaded (derivation in the description)

READING = ("*How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog* — Simon Boehm, "
           "kernel 3, *Shared Memory Cache-Blocking*, and the arithmetic-intensity discussion of kernel 4")

DESCRIPTION = f"""\
# Puzzle 49 — Thin shared tiles

`c = a @ b` again (`a` is `m × k`, `b` is `k × n`, float32), now with shared memory. Puzzle 14 loaded
square tiles whose shape matched the block of threads. Here the block is {TILE} × {TILE} threads — one per
output of its tile of `c` — but it walks along `k` in **thin slices** of depth {BK}: a {TILE} × {BK} slice
of `a` and a {BK} × {TILE} slice of `b` per step, {BUDGET} bytes of shared memory in all.

```
                        b slice: 16 x 32, loaded by threads 512..1023
                      +----------------------+
                      |  rows k0 .. k0+15    |
                      +----------------------+
  a slice: 32 x 16    +----------------------+     for k0 in 0, 16, 32, ...:
  loaded by           |                      |         load both slices (0 past the edges)
  threads 0..511      |      c tile          |         barrier
  +------------+      |      32 x 32         |         16 multiply-adds from shared memory
  | cols k0 .. |  ->  |  thread (tx, ty)     |         barrier
  |   k0+15    |      |  computes c[ty, tx]  |
  +------------+      +----------------------+
```

The slices hold {TILE * BK} + {BK * TILE} = 1024 values: exactly one per thread. So the thread that *loads* a
value is not the thread that *uses* it: number the threads `t = ty * {TILE} + tx`; threads `t < 512` load
the `a` slice as `t // {BK}, t % {BK}` (row, column) and the others load the `b` slice from `u = t - 512` as
`u // {TILE}, u % {TILE}` — so that neighbouring threads always read neighbouring addresses.

**Arithmetic intensity.** Per step a block loads `({TILE}·{BK} + {BK}·{TILE}) · 4 = {BUDGET}` bytes and does
`2 · {TILE} · {TILE} · {BK} = {2 * TILE * TILE * BK}` FLOPs: **{INTENSITY:g} FLOPs per byte loaded**. The depth cancels
(`2·T·T·BK / (8·T·BK) = T/4`): a thin slice costs less shared memory and more barriers, but the
intensity belongs to the tile's *width*. The naive kernel of puzzle 48 got 64 FLOPs per 160 bytes, 0.4.
The checker reads it from the counts: FLOPs the kernel executes ÷ (sectors loaded × 32), on every case
of at least {MIN_FLOPS:,} FLOPs. A wider tile would need more than 1024 threads — puzzle 50's problem.

**What's new:** a loading layout that differs from the compute layout, and arithmetic intensity measured
from the counters.

**Launch:** blocks of ({TILE}, {TILE}) threads (x = column, y = row), grid `(ceil(n / {TILE}), ceil(m / {TILE}))`.
Shared memory at most {BUDGET} bytes per block; float32 arithmetic; each thread writes `c` at most once.
`k` need not be a multiple of {BK}, nor `m` and `n` of {TILE}.

**Read more:** {READING}
"""


def _case(name: str, a, b, note: str) -> Case:
    return tiled_case(name, a, b, note, "matmul_tiled", (TILE, TILE), (TILE, TILE))


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 49)
    m_random = 8 * int(rng.integers(1, 9)) + 1
    shapes = [
        ((40, 24, 40), "partial tiles both ways, and a last slice only 8 deep"),
        ((32, 16, 32), "everything fits: one block, one slice"),
        ((24, 1, 40), "k = 1: one slice, 1 deep"),
        ((m_random, 40, 64), f"m = {m_random}, drawn at random: rows past the edge are zeros"),
        ((1, 8, 8), "one row, one short slice: 1016 threads with nothing to store"),
        ((64, 128, 64), "4 full blocks, 8 slices each: 8 FLOPs per byte exactly (intensity judged)"),
        ((32, 256, 64), "a long k: 16 slices, 2 blocks (intensity judged)"),
    ]
    example = _case("worked example 2x2 @ 2x3", np.array([[1, 2], [3, 4]]), np.array([[5, 6, 7], [8, 9, 10]]),
                    "the example from the description")
    return random_cases(rng, example, shapes, _case)


def bench(n: int) -> Case:
    """Graduate mode: a square matmul with about ``n`` outputs and k = the side."""
    return square_bench(_case, n, TILE, 49)


PUZZLE = Puzzle(
    slug="matmul-thin-tiles",
    number=49,
    title="Thin shared tiles",
    chapter=8,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("matmul_tiled",),
    spec=spec,
    make_cases=make_cases,
    outputs=("c",),
    constraints=(
        must_use_shared(),
        shared_memory_budget(BUDGET),
        float32_only(),
        max_global_writes_per_thread(1, "c"),
    ),
    stars=(
        Star(2, f"every loaded value reused across the tile: {INTENSITY:g} FLOPs per byte loaded",
             (load_intensity(INTENSITY),)),
        Star(3, "coalesced loads and stores, no bank conflicts", (ideal_coalescing(), no_bank_conflicts())),
    ),
    hints=(
        "Two layouts: each thread computes `c[by*32 + ty, bx*32 + tx]`, but for loading, flatten the thread "
        "index `t = ty * 32 + tx` and give the first 512 threads the `a` slice, the rest the `b` slice.",
        "Per step `k0`: if `t < 512`: `i, q = t // 16, t % 16` and `sa[i, q] = a[r0 + i, k0 + q]` (0 outside); "
        "else `u = t - 512`, `q, j = u // 32, u % 32`, `sb[q, j] = b[k0 + q, c0 + j]` (0 outside). "
        "Barrier, 16 multiply-adds `sa[ty, q] * sb[q, tx]`, barrier.",
        "`sa = cuda.shared.array((TILE, BK), numba.float32)`, `sb = cuda.shared.array((BK, TILE), numba.float32)`; "
        "`for k0 in range(0, k, BK):` ... `acc = numba.float32(0.0)` before it; "
        "after it `if r0 + ty < m and c0 + tx < n: c[r0 + ty, c0 + tx] = acc`.",
    ),
    reading=READING,
    rtol=0.0,        # exact: every case's values are multiples of 1/8 (see matrices.py)
    atol=0.0,
    bench=bench,
)
