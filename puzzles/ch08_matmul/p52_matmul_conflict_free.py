"""Puzzle 52 — Conflict-free register tiles: interleave what each thread owns; 0 bank conflicts, stores
coalesced."""

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
from .rules import float32_only, load_intensity, shared_loads_per_fma

BM = 128
BN = 128
BK = 8
TM = 8
TN = 8
THREADS = (BN // TN, BM // TM)   # (16, 16)
NT = THREADS[0] * THREADS[1]     # 256
LOADS = BM * BK // NT            # 4
PAD = 4                          # room for 4 padding words per row, should a slice be stored transposed
BUDGET = (BK * (BM + PAD) + BK * (BN + PAD)) * 4   # 8448 bytes
INTENSITY = BM * BN / (2 * (BM + BN))             # 32
LOADS_PER_FMA = (TM + TN) / (TM * TN)             # 0.25

READING = ("*How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog* — Simon Boehm, "
           "kernels 6-8 (the transposed A slice, and *Avoiding Bank Conflicts*)")

DESCRIPTION = f"""\
# Puzzle 52 — Conflict-free register tiles

Puzzle 51's kernel, with the same tiles and the same numbers (32 FLOPs per byte, 0.25 shared loads per
multiply-add), has two faults you can now count. A warp is 32 threads: `ty` = 2w and 2w+1, `tx` = 0..15.
At step `q`, for each `j`, its lanes read `sb[q, tx*{TN} + j]`:

```
 word  tx*8 + j     tx:  0   1   2   3   4   5  ...  15       bank = word % 32
 bank (j = 0)            0   8  16  24   0   8  ...  24       4 banks, 4 words each: 4 wavefronts
```

**3 bank conflicts** per read of `sb`, and for each `i` **1** per read of `sa[ty*{TM} + i, q]` (the two rows
are 64 words apart: same bank). That is 32 conflicts per warp per step `q`. And each store
`c[r, c0 + tx*{TN} + j]` sends 32 lanes to 32 different sectors (16 columns 32 bytes apart, 2 rows): 8 times
the ideal.

**The fix: interleave.** Let thread `(tx, ty)` own columns `tx + {THREADS[0]}·j` and rows `ty + {THREADS[1]}·i`
instead of `tx·{TN} + j` and `ty·{TM} + i`. The tile is the same, the threads share it out differently:

```
 blocked (puzzle 51):  thread tx owns columns  8tx, 8tx+1, ..., 8tx+7     a warp reads words 8 apart
 interleaved:          thread tx owns columns  tx, tx+16, ..., tx+112     a warp reads 16 neighbours
```

Now a warp's 16 columns are neighbours — one wavefront, one run of 64 bytes per row for the stores — and
its two rows `ty`, `ty + 1` are 8 words apart in `sa`: different banks. (The worklog instead stores the `a`
slice transposed, `sa[q, i]`, so CUDA C can fetch four of its values with one 128-bit load. numba issues one
load per value, so here only the banks matter — and a transposed slice written without padding trades the
read conflicts for write conflicts: 8 lanes per bank. Padded by {PAD} words per row it is conflict-free both
ways; the budget leaves room for that.)

**What's new:** the bank-conflict arithmetic of tiles where every thread owns several elements, and
ownership that strides by the number of threads.

**Launch:** as in puzzle 51: blocks of {THREADS} threads, grid `(ceil(n / {BN}), ceil(m / {BM}))`; each thread
loads {LOADS} values of each slice, `e = t + {NT}·p`. At most {BUDGET} bytes of shared memory; float32
arithmetic; the constraints keep 51's {INTENSITY:g} FLOPs per byte and {LOADS_PER_FMA:g} shared loads per multiply-add.

**Read more:** {READING}
"""


def _case(name: str, a, b, note: str) -> Case:
    return tiled_case(name, a, b, note, "matmul_conflict_free", (BM, BN), THREADS)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 52)
    m_random = int(rng.integers(129, 200))
    shapes = [
        ((m_random, 16, 136), f"m = {m_random}, drawn at random, and n = 136: partial tiles both ways"),
        ((3, 8, 40), "three rows, forty columns: most threads own nothing"),
        ((40, 1, 136), "k = 1: one slice, 1 deep"),
        ((140, 8, 8), "eight columns: half of each row group's lanes have nothing to store"),
        ((128, 32, 128), "one full block, 4 slices (the ratios are judged here)"),
    ]
    example = _case("worked example 2x3 @ 3x2", np.array([[1, 2, 3], [4, 5, 6]]),
                    np.array([[1, 2], [0, 1], [-1, 3]]), "the example from puzzle 14: c = [[-2, 13], [-2, 31]]")
    return random_cases(rng, example, shapes, _case)


def bench(n: int) -> Case:
    """Graduate mode: a square matmul with about ``n`` outputs and k = the side."""
    return square_bench(_case, n, BM, 52)


PUZZLE = Puzzle(
    slug="matmul-conflict-free",
    number=52,
    title="Conflict-free register tiles",
    chapter=8,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("matmul_conflict_free",),
    spec=spec,
    make_cases=make_cases,
    outputs=("c",),
    constraints=(
        must_use_shared(),
        shared_memory_budget(BUDGET),
        float32_only(),
        max_global_writes_per_thread(TM * TN, "c"),
        load_intensity(INTENSITY),
        shared_loads_per_fma(LOADS_PER_FMA),
    ),
    stars=(
        Star(2, "coalesced stores: a warp writes runs of neighbouring columns", (ideal_coalescing(),)),
        Star(3, "no shared-memory bank conflicts", (no_bank_conflicts(),)),
    ),
    hints=(
        "Keep puzzle 51's loading and its loop over q; change only which rows and columns a thread owns.",
        "Columns `tx + 16*j` make the 16 lanes of a row group read 16 neighbouring words of `sb` and store "
        "16 neighbouring floats of `c`. For `sa`, rows `ty + 16*i` put the warp's two row groups in "
        "neighbouring rows: 8 words apart, different banks.",
        "`ra[i] = sa[ty + 16 * i, q]`, `rb[j] = sb[q, tx + 16 * j]`; at the end "
        "`c[r0 + ty + 16 * i, c0 + tx + 16 * j] = acc[i, j]` where inside the matrix.",
    ),
    reading=READING,
    rtol=0.0,        # exact: every case's values are multiples of 1/8 (see matrices.py)
    atol=0.0,
    bench=bench,
)
