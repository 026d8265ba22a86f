"""Puzzle 54 — Double buffering: two copies of each slice, the next one loaded before the current one is used,
one barrier per k-step."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_writes_per_thread, must_use_shared, no_bank_conflicts

from .matrices import generator, random_cases, spec, square_bench, tiled_case
from .rules import (
    MIN_FLOPS,
    barriers_per_slice,
    float32_only,
    load_intensity,
    shared_loads_per_fma,
    shared_memory_exactly,
)

BM = 64
BN = 64
BK = 8
TM = 8
THREADS = (BN, BM // TM)            # (64, 8): puzzle 50's block
TWO_BUFFERS = 2 * (BM * BK + BK * BN) * 4   # 8192 bytes: two slices of a and two of b
INTENSITY = BM * BN / (2 * (BM + BN))       # 16
LOADS_PER_FMA = (1 + TM) / TM               # 1.125
SLICE_FLOPS = 2 * BM * BN * BK              # one k-slice of the block's tile: 65536 FLOPs

READING = ("*Efficient GEMM in CUDA* — the CUTLASS documentation, section *Software Pipelining* (double "
           "buffering of shared memory); the worklog's later kernels do the same")

DESCRIPTION = f"""\
# Puzzle 54 — Double buffering

Puzzle 50's kernel (64 × 64 tiles, 8 outputs per thread) spends each k-step like this:

```
 single buffer (puzzle 50)                    double buffer (this puzzle)
   load slice s   -> sa, sb                     load slice 0 -> buffer 0;  barrier
   barrier        (wait for the loads)          for s = 0, 1, 2, ...:
   compute on sa, sb                              load slice s+1 -> buffer (s+1) % 2   <- issued first
   barrier        (before the next loads          compute on buffer s % 2               <- overlaps it
                   overwrite sa, sb)              barrier
```

With one buffer, the loads of the next slice cannot start until every warp has finished computing on
the current one — the second barrier — and the multiply-adds cannot start until the loads are done. Two
buffers break that chain: while the block computes on one buffer, the loads for the next step fill the
other. A global load takes hundreds of cycles; issued before the computation, it has that long to arrive.
And there is **one barrier per step**: it says both "the next slice is loaded" and "nobody still reads
the buffer that gets overwritten next".

**What the simulator can check, and what it cannot.** The simulator has no latency to hide: it runs the
same instructions either way, so the counts are puzzle 50's (16 FLOPs per byte, 1.125 shared loads per
multiply-add, the same sectors). It checks the structure it can see: shared memory is exactly two buffers
({TWO_BUFFERS} bytes); it counts every block's barriers, and allows one per slice of k plus the one after
the first load (`steps + 1`: 17 for k = 128, where puzzle 50 waits 32 times); and the race detector proves
that single barrier is enough — with *one* buffer and one barrier, the next slice overwrites values other
warps still read, and that is a data race. The speed-up itself only shows on a GPU (graduate mode times
this kernel against puzzle 50's).

**Which buffer.** Index the buffer with the step: `sa[s % 2, i, q]`. Load slice `s + 1` only if it
exists (`(s + 1) * {BK} < k`); threads still reach the barrier either way.

**What's new:** a software pipeline: the loads for the next step in flight while this step computes.

**Launch:** as in puzzle 50: blocks of {THREADS} threads, grid `(ceil(n / {BN}), ceil(m / {BM}))`; thread
`(tx, ty)` owns column `tx`, rows `ty*{TM} .. ty*{TM} + {TM - 1}`. Shared memory exactly {TWO_BUFFERS} bytes;
float32 arithmetic; at most one barrier per slice of k, plus one. Ratios and barriers judged on cases of
at least {MIN_FLOPS:,} FLOPs.

**Read more:** {READING}
"""


def _case(name: str, a, b, note: str) -> Case:
    return tiled_case(name, a, b, note, "matmul_double_buffered", (BM, BN), THREADS)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 54)
    m_random = int(rng.integers(65, 128))
    shapes = [
        ((m_random, 24, 72), f"m = {m_random}, drawn at random: partial tiles; 3 slices"),
        ((64, 8, 64), "a single slice: nothing to prefetch"),
        ((64, 16, 64), "two slices: the prefetch runs once, into buffer 1"),
        ((64, 128, 64), "16 slices, each buffer reused 8 times (ratios judged)"),
        ((40, 1, 136), "k = 1: one slice holding one value of k, which a step count short by one drops"),
    ]
    example = _case("worked example 3x2 @ 2x2", np.array([[1, 0.5], [-1, 2], [0, 3]]),
                    np.array([[2, 1], [4, -1]]), "puzzle 50's example: c = [[4, 0.5], [6, -3], [12, -3]]")
    return random_cases(rng, example, shapes, _case)


def bench(n: int) -> Case:
    """Graduate mode: a square matmul with about ``n`` outputs and k = the side."""
    return square_bench(_case, n, BM, 54)


PUZZLE = Puzzle(
    slug="matmul-double-buffer",
    number=54,
    title="Double buffering",
    chapter=8,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("matmul_double_buffered",),
    spec=spec,
    make_cases=make_cases,
    outputs=("c",),
    constraints=(
        must_use_shared(),
        shared_memory_exactly(TWO_BUFFERS, "two buffers of each slice"),
        float32_only(),
        max_global_writes_per_thread(TM, "c"),
        barriers_per_slice(SLICE_FLOPS),
    ),
    stars=(
        Star(2, f"puzzle 50's reuse: {INTENSITY:g} FLOPs per byte, {LOADS_PER_FMA:g} shared loads per multiply-add",
             (load_intensity(INTENSITY), shared_loads_per_fma(LOADS_PER_FMA))),
        Star(3, "coalesced, no bank conflicts", (ideal_coalescing(), no_bank_conflicts())),
    ),
    hints=(
        "Declare the slices with a leading dimension of 2: `sa = cuda.shared.array((2, BM, BK), numba.float32)`. "
        "Load slice 0 before the loop, then loop over the step number `s`, not over `k0`.",
        "In step `s`: if slice `s + 1` exists, load it into buffer `(s + 1) % 2`; then the multiply-adds on "
        "buffer `s % 2`; then the one barrier. Loading is puzzle 50's: one value of each slice per thread.",
        "`steps = (k + BK - 1) // BK`; prologue: load slice 0 into buffer 0, `cuda.syncthreads()`; "
        "`for s in range(steps): cur = s % 2` ... `if s + 1 < steps:` load `k0 = (s + 1) * BK` into `1 - cur` ... "
        "`for q in range(BK): bv = sb[cur, q, tx]` ... `cuda.syncthreads()`.",
    ),
    reading=READING,
    rtol=0.0,        # exact: every case's values are multiples of 1/8 (see matrices.py)
    atol=0.0,
    bench=bench,
)
