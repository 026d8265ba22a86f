"""Puzzle 50 — 1-D register tiles: each thread computes a column of TM outputs; 16 FLOPs per byte."""

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
from .rules import MIN_FLOPS, float32_only, load_intensity, shared_loads_per_fma

BM = 64                          # rows of c per block
BN = 64                          # columns of c per block
BK = 8                           # depth of a k-slice
TM = 8                           # outputs per thread, down a column
THREADS = (BN, BM // TM)         # (64, 8): 512 threads, x = column, y = group of TM rows
BUDGET = (BM * BK + BK * BN) * 4  # 4096 bytes
INTENSITY = BM * BN / (2 * (BM + BN))   # 16 FLOPs per byte loaded
LOADS_PER_FMA = (1 + TM) / TM    # 1.125: one value of b and TM values of a for TM multiply-adds

READING = ("*How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog* — Simon Boehm, "
           "kernel 4, *1D Blocktiling for Calculating Multiple Results per Thread*")

DESCRIPTION = f"""\
# Puzzle 50 — 1-D register tiles

`c = a @ b` (float32) with bigger tiles: a block now owns a **{BM} × {BN}** tile of `c`. It cannot have a
thread per output (4096 > 1024), so each of its {THREADS[0] * THREADS[1]} threads computes **{TM} outputs
down a column**, kept in a small array of registers:

```
              b slice (8 x 64): thread (tx, ty) loads b[k0 + ty, c0 + tx]
            +------------------------------------+
            |   sb[q, tx]  ->  one register bv   |
            +------------------------------------+
  a slice   +------------------------------------+
  (64 x 8)  |  ty = 0: rows  0..7     x          |   thread (tx, ty) owns
  +-----+   |  ty = 1: rows  8..15    x          |   c[r0 + ty*8 + i, c0 + tx],  i = 0..7,
  |     |   |  ...                    x          |   in acc[0..7]
  |     |   |  ty = 7: rows 56..63    x          |
  +-----+   +------------------------------------+
                                   column tx
  for q in 0..7:   bv = sb[q, tx];   for i in 0..7:   acc[i] += sa[ty*8 + i, q] * bv
```

**Two numbers move.** The intensity of a `BM × BN` tile is `2·BM·BN·BK / (4·BK·(BM + BN))` =
`BM·BN / (2(BM + BN))`: **{INTENSITY:g} FLOPs per byte loaded**, twice puzzle 49's 8. And the shared-memory
instructions per multiply-add fall: puzzle 49 read two values from shared memory for each multiply-add;
here `bv` is read once and used {TM} times, so it is `(1 + {TM}) / {TM}` = **{LOADS_PER_FMA:g}**. Shared memory is
fast, but an SM issues only so many shared-memory instructions per cycle: the worklog's profile of the
one-output kernel shows its warps stalled waiting on that pipe. It measured 2,980 GFLOP/s for that
kernel and 8,475 GFLOP/s for this one (RTX A6000).

**Loading.** The two slices hold {BM * BK} + {BK * BN} values, one each per thread: thread
`t = ty * {BN} + tx` loads `sa[t // {BK}, t % {BK}]`, and `sb[ty, tx]` — neighbouring threads, neighbouring
addresses. `k` is a multiple of {BK} in every case but the worked example, so each row of the `a` slice is
one 32-byte sector.

**What's new:** several outputs per thread in registers (`cuda.local.array({TM}, numba.float32)`), and a
value loaded from shared memory once and reused from a register.

**Launch:** blocks of {THREADS} threads (x = column, y = row group), grid `(ceil(n / {BN}), ceil(m / {BM}))`.
At most {BUDGET} bytes of shared memory; float32 arithmetic; each `c` element written once (each thread
writes up to {TM}). The ratios are judged on cases of at least {MIN_FLOPS:,} FLOPs.

**Read more:** {READING}
"""


def _case(name: str, a, b, note: str) -> Case:
    return tiled_case(name, a, b, note, "matmul_1d_tiles", (BM, BN), THREADS)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 50)
    m_random = int(rng.integers(65, 128))
    shapes = [
        ((70, 24, 72), "partial tiles both ways: 6 rows and 8 columns past the first block"),
        ((m_random, 40, 64), f"m = {m_random}, drawn at random: the second block's last row groups idle"),
        ((1, 8, 64), "one row: 7 of the 8 row groups have nothing to store"),
        ((64, 128, 64), "one full block, 16 slices: 16 FLOPs per byte exactly (judged)"),
        ((128, 64, 128), "4 full blocks (judged)"),
    ]
    example = _case("worked example 3x2 @ 2x2", np.array([[1, 0.5], [-1, 2], [0, 3]]),
                    np.array([[2, 1], [4, -1]]), "the example from the description")
    return random_cases(rng, example, shapes, _case)


def bench(n: int) -> Case:
    """Graduate mode: a square matmul with about ``n`` outputs and k = the side."""
    return square_bench(_case, n, BM, 50)


PUZZLE = Puzzle(
    slug="matmul-1d-register-tiles",
    number=50,
    title="1-D register tiles",
    chapter=8,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("matmul_1d_tiles",),
    spec=spec,
    make_cases=make_cases,
    outputs=("c",),
    constraints=(
        must_use_shared(),
        shared_memory_budget(BUDGET),
        float32_only(),
        max_global_writes_per_thread(TM, "c"),
    ),
    stars=(
        Star(2, f"{INTENSITY:g} FLOPs per byte loaded", (load_intensity(INTENSITY),)),
        Star(3, f"{LOADS_PER_FMA:g} shared loads per multiply-add, coalesced, no bank conflicts",
             (shared_loads_per_fma(LOADS_PER_FMA), ideal_coalescing(), no_bank_conflicts())),
    ),
    hints=(
        "Thread (tx, ty) owns rows `ty*TM .. ty*TM + TM-1` of the tile, column `tx`. Keep its TM running sums "
        "in `acc = cuda.local.array(TM, numba.float32)` (set them to 0 first).",
        "Per slice: `t = ty*BN + tx`; `sa[t // BK, t % BK] = a[r0 + t // BK, k0 + t % BK]` and "
        "`sb[ty, tx] = b[k0 + ty, c0 + tx]` (0 outside), barrier, multiply-adds, barrier. In the multiply-adds "
        "read `sb[q, tx]` once per `q`, outside the loop over `i`.",
        "`for q in range(BK): bv = sb[q, tx]` then `for i in range(TM): acc[i] += sa[ty*TM + i, q] * bv`. "
        "At the end `for i in range(TM): r = r0 + ty*TM + i; if r < m and c0 + tx < n: c[r, c0 + tx] = acc[i]`.",
    ),
    reading=READING,
    rtol=0.0,        # exact: every case's values are multiples of 1/8 (see matrices.py)
    atol=0.0,
    bench=bench,
)
