"""Puzzle 28 — Hillis-Steele scan: an inclusive prefix sum of each block in log2(block) barrier steps."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    log_step_work,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
    shared_memory_budget,
)

TPB = 64                 # threads per block = elements per tile
SENTINEL = -999_999      # no prefix sum of these inputs can equal it

READING = ("*Parallel Prefix Sum (Scan) with CUDA* — GPU Gems 3, ch. 39 (Harris, Sengupta, Owens), "
           "section 39.2.1, *A Naive Parallel Scan*")

DESCRIPTION = f"""\
# Puzzle 28 — Hillis-Steele scan

A *scan* (prefix sum) replaces each element by the sum of everything up to and including it. Here every
block scans its own tile of {TPB} elements; tiles do not add into each other (puzzle 30 joins them up):

    out[i] = a[s] + a[s+1] + ... + a[i]      where s = the first index of i's tile

**Example** with a tile of 8 (yours has {TPB}): `a = [3, 1, -2, 5, 0, 4, -1, 2]` gives
`out = [3, 4, 2, 7, 7, 11, 10, 12]`.

Puzzle 12 let thread t loop over slots 0..t of the tile: thread {TPB - 1} made {TPB} additions in a row.
Hillis and Steele need log2(8) = 3 rounds for a tile of 8: in round k every element adds the element `2^k`
places to its left (if there is one). After round k each element holds the sum of the last `2^(k+1)` inputs
ending at it.

```
            t0   t1   t2   t3   t4   t5   t6   t7
input        3    1   -2    5    0    4   -1    2
offset 1     3    4   -1    3    5    4    3    1     x[t] + x[t-1]
offset 2     3    4    2    7    4    7    8    5     x[t] + x[t-2]
offset 4     3    4    2    7    7   11   10   12     x[t] + x[t-4]   = out
```

The trap: in one step thread 5 reads slot 4 while thread 4 overwrites slot 4 with its new sum. If both use
one shared array, whether thread 5 sees the old or the new value is a race. Keep **two** shared buffers
(`cuda.shared.array((2, {TPB}), numba.int32)`): read from one, write the other, `cuda.syncthreads()`, swap.

**What's new:** a parallel algorithm whose steps depend on each other: log-step scanning with double
buffering so no thread overwrites a value another thread has yet to read.

**Launch:** blocks of {TPB} threads, one thread per element, `ceil(n / {TPB})` blocks; the last tile may be
partial (pad it with zeros in shared memory, and write only `i < n`). Each thread reads `a` once and writes
`out` once; `a` and `out` are int32, so the answer must be exact. ★★ asks for the log-step rounds rather
than puzzle 12's loop (measured as shared-memory loads per shared-memory store: about 2 for a round,
up to {TPB} for the loop).

**Read more:** {READING}
"""


def spec(a: np.ndarray, out: np.ndarray, n: int) -> dict[str, np.ndarray]:
    tiles = [np.cumsum(a[s:s + TPB], dtype=np.int64) for s in range(0, n, TPB)]
    return {"out": np.concatenate(tiles).astype(np.int32)}


def _case(name: str, a: np.ndarray, note: str) -> Case:
    a = np.asarray(a, dtype=np.int32)
    n = a.size
    out = np.full(n, SENTINEL, dtype=np.int32)
    step = LaunchStep("hillis_steele_kernel", grid=(n + TPB - 1) // TPB, block=TPB, args=("a", "out", "n"))
    return Case(name, {"a": a, "out": out, "n": n}, (step,), note)


def _nonzero(rng: np.random.Generator, n: int, high: int) -> np.ndarray:
    """Random integers in [-high, high] without zeros, so a dropped or doubled term always shows."""
    v = rng.integers(1, high + 1, n) * rng.choice([-1, 1], n)
    return v


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 28)
    n = size(rng, 193, 255)
    return (
        _case("worked example n=8", [3, 1, -2, 5, 0, 4, -1, 2],
              "the example from the description: one partial tile"),
        _case("random n=64", _nonzero(rng, 64, 50), "exactly one full tile"),
        _case("ones n=64", np.ones(64),
              "out[i] = i + 1: an off-by-one or a missed step is easy to read here"),
        _case(f"random n={n}", _nonzero(rng, n, 50),
              f"four tiles, the last with {n - 192} elements: each tile restarts at 0, threads past n write nothing"),
        _case("n=1", [-17], "a single element in a single block"),
        _case("random n=129", _nonzero(rng, 129, 1000),
              "the last tile has one element; large values catch a sum that adds the wrong tile"),
    )


PUZZLE = Puzzle(
    slug="hillis-steele",
    number=28,
    title="Hillis-Steele scan",
    chapter=6,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("hillis_steele_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_writes_per_thread(1, "out"),
        must_use_shared(),
        shared_memory_budget(2 * TPB * 4),
        no_atomics(),
    ),
    stars=(
        Star(2, "log-step: log2(64) rounds of one add each, not a loop over the whole prefix",
             (log_step_work(),)),
        Star(3, "coalesced, and no bank conflicts: keep the two buffers as two rows, not two columns",
             (ideal_coalescing(), no_bank_conflicts())),
    ),
    hints=(
        "Load your element into shared memory first (0 past the end of the array), then run log2(64) = 6 "
        "steps with offsets 1, 2, 4, 8, 16, 32. Every step ends with `cuda.syncthreads()`.",
        "Keep an index `src` (0 or 1) saying which row of the (2, 64) buffer holds the current values. In a "
        "step each thread computes `v = buf[src, t]`, adds `buf[src, t - offset]` when `t >= offset`, writes "
        "`buf[1 - src, t] = v`, then everyone syncs and `src = 1 - src`.",
        "The loop: `offset = 1`; `while offset < TPB:` ... `offset *= 2`. After it, the answer is "
        "`buf[src, t]`; write it to `out[i]` when `i < n`.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """n elements, one tile of TPB per block."""
    a = np.random.default_rng(8028).integers(-1000, 1001, n, dtype=np.int32)
    return _case(f"bench n={n}", a, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
