"""Puzzle 51 — 2-D register tiles: an 8x8 outer product per thread per k; 32 FLOPs per byte loaded."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, Puzzle, Star
from puzzles.rules import max_global_writes_per_thread, must_use_shared, shared_memory_budget

from .matrices import generator, random_cases, spec, square_bench, tiled_case
from .rules import MIN_FLOPS, float32_only, load_intensity, shared_loads_per_fma

BM = 128                         # rows of c per block
BN = 128                         # columns of c per block
BK = 8                           # depth of a k-slice
TM = 8                           # rows of c per thread
TN = 8                           # columns of c per thread
THREADS = (BN // TN, BM // TM)   # (16, 16): 256 threads, x = column group, y = row group
NT = THREADS[0] * THREADS[1]
LOADS = BM * BK // NT            # 4 values of each slice per thread per step
BUDGET = (BM * BK + BK * BN) * 4  # 8192 bytes
INTENSITY = BM * BN / (2 * (BM + BN))   # 32 FLOPs per byte loaded
LOADS_PER_FMA = (TM + TN) / (TM * TN)   # 0.25

READING = ("*How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog* — Simon Boehm, "
           "kernel 5, *Increasing Arithmetic Intensity via 2D Blocktiling*")

DESCRIPTION = f"""\
# Puzzle 51 — 2-D register tiles

`c = a @ b` (float32) with a **{BM} × {BN}** tile per block and **{TM} × {TN} outputs per thread**: {NT}
threads, each holding 64 running sums in registers. At every step `q` of a slice, a thread copies {TM}
values of the `a` slice and {TN} of the `b` slice from shared memory into registers, then does all
{TM} × {TN} multiply-adds between them — an outer product:

```
                                 rb = sb[q, tx*8 .. tx*8 + 7]        (8 registers)
                                +--+--+--+--+--+--+--+--+
                                |  |  |  |  |  |  |  |  |
                                +--+--+--+--+--+--+--+--+
  ra = sa[ty*8 .. ty*8 + 7, q]  +--+
  (8 registers)                 |  |   acc[i, j] += ra[i] * rb[j]  for i, j in 0..7:
                                |  |   64 multiply-adds for 16 loads from shared memory
                                +--+
  thread (tx, ty) owns c[r0 + ty*8 + i, c0 + tx*8 + j], in acc[0..7, 0..7]
```

**The numbers.** Intensity `BM·BN / (2(BM + BN))` = **{INTENSITY:g} FLOPs per byte loaded** (puzzle 50: 16);
shared-memory loads per multiply-add `(TM + TN) / (TM·TN)` = **{LOADS_PER_FMA:g}** (puzzle 50: 1.125). The worklog
measured 15,972 GFLOP/s here against 8,475 for 1-D tiles (RTX A6000).

**Loading.** Each slice holds {BM * BK} values: {LOADS} per thread. With `t = ty * {THREADS[0]} + tx`, thread `t`
loads elements `e = t + {NT}·p`, `p = 0..{LOADS - 1}`, of each slice in row-major order: `sa[e // {BK}, e % {BK}]` and
`sb[e // {BN}, e % {BN}]`. `k` is a multiple of {BK} in every case but the worked example.

Not judged here, but count them: a warp covers 2 row groups and 16 column groups, so its reads of
`sb[q, tx*{TN} + j]` land in only 4 distinct banks (words 8 apart), and its stores to `c` hit 32 different
sectors each. Puzzle 52 fixes both.

**What's new:** the outer product from registers: {TM} + {TN} loads feed {TM * TN} multiply-adds.

**Launch:** blocks of {THREADS} threads, grid `(ceil(n / {BN}), ceil(m / {BM}))`. At most {BUDGET} bytes of
shared memory; float32 arithmetic; each element of `c` written once. Ratios judged on cases of at least
{MIN_FLOPS:,} FLOPs.

**Read more:** {READING}
"""


def _case(name: str, a, b, note: str) -> Case:
    return tiled_case(name, a, b, note, "matmul_2d_tiles", (BM, BN), THREADS)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 51)
    m_random = int(rng.integers(129, 200))
    shapes = [
        ((m_random, 16, 136), f"m = {m_random}, drawn at random, and n = 136: partial tiles both ways"),
        ((1, 8, 128), "one row, one slice"),
        ((200, 8, 8), "tall and thin: two row blocks, each with 8 live columns"),
        ((128, 32, 128), "one full block, 4 slices: 32 FLOPs per byte exactly (judged)"),
    ]
    example = _case("worked example 2x2 @ 2x2", np.array([[1, 2], [3, 4]]), np.array([[0.5, -1], [2, 0.25]]),
                    "the example from the description")
    return random_cases(rng, example, shapes, _case)


def bench(n: int) -> Case:
    """Graduate mode: a square matmul with about ``n`` outputs and k = the side."""
    return square_bench(_case, n, BM, 51)


PUZZLE = Puzzle(
    slug="matmul-2d-register-tiles",
    number=51,
    title="2-D register tiles",
    chapter=8,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("matmul_2d_tiles",),
    spec=spec,
    make_cases=make_cases,
    outputs=("c",),
    constraints=(
        must_use_shared(),
        shared_memory_budget(BUDGET),
        float32_only(),
        max_global_writes_per_thread(TM * TN, "c"),
    ),
    stars=(
        Star(2, f"{INTENSITY:g} FLOPs per byte loaded", (load_intensity(INTENSITY),)),
        Star(3, f"an outer product from registers: {LOADS_PER_FMA:g} shared loads per multiply-add",
             (shared_loads_per_fma(LOADS_PER_FMA),)),
    ),
    hints=(
        "Three register arrays: `acc = cuda.local.array((TM, TN), numba.float32)` (zeroed), and `ra`, `rb` of "
        "TM and TN values. The slices are loaded in a loop of LOADS rounds, `e = t + NT * p`.",
        "Per slice: load, barrier; `for q in range(BK):` fill `ra[i] = sa[ty*TM + i, q]` and "
        "`rb[j] = sb[q, tx*TN + j]`, then `acc[i, j] += ra[i] * rb[j]` for all i, j; barrier.",
        "Loading: `for p in range(LOADS): e = t + NT * p`; `sa[e // BK, e % BK] = a[r0 + e // BK, k0 + e % BK]` "
        "and `sb[e // BN, e % BN] = b[k0 + e // BN, c0 + e % BN]`, each 0.0 where the index leaves the "
        "matrix. Store: `c[r0 + ty*TM + i, c0 + tx*TN + j] = acc[i, j]` where inside.",
    ),
    reading=READING,
    rtol=0.0,        # exact: every case's values are multiples of 1/8 (see matrices.py)
    atol=0.0,
    bench=bench,
)
