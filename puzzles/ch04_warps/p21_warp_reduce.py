"""Puzzle 21 — Warp reduce: each warp sums its 32 values with register shuffles, no shared memory."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    no_atomics,
    no_shared,
)

TPB = 128            # 4 warps per block
WARP = 32

READING = ("GPU MODE lectures — the lecture on reductions; and the *GPU Glossary* — Modal, entry *Warp*")

DESCRIPTION = f"""\
# Puzzle 21 — Warp reduce

Every warp sums its own 32 elements: `out[w] = a[32*w] + a[32*w + 1] + ... + a[32*w + 31]` (elements past
`n` count as 0; the last warp may be partial).

The 32 threads of a warp execute together, and they can read each other's *registers* directly, without
memory: `cuda.shfl_down_sync(mask, v, d)` returns the `v` of lane `lane + d` (a lane with no partner
`lane + d < 32` gets its own `v` back). Halving the distance each time folds 32 values into lane 0 in
five steps:

```
lane:      0    1    2    3    4    5    6    7  ...  16   17  ...  31
d = 16:   v0+v16  v1+v17  ...                          (lanes 16..31 now hold leftovers)
d = 8:    lane 0 holds v0+v8+v16+v24, ...
d = 4, 2, 1:  ...                       lane 0 holds the sum of all 32
```

Every lane runs every step (the upper lanes compute garbage nobody reads) — that is what keeps the warp
together. `mask = 0xffffffff` says all 32 lanes take part, so **all 32 must reach the call**: a thread past
`n` must not return early; give it `v = 0` instead.

**Example** with 8-lane warps for brevity (yours have 32; the steps are d = 4, 2, 1):
`v = [3, 1, -2, 5, 0, 4, -1, 2]` -> d=4: lane 0..3 `[3, 5, -3, 7]` -> d=2: `[0, 12]` -> d=1: `12`.

**What's new:** warp shuffles: a reduction with no shared memory and no `syncthreads` — the warp is its
own synchronisation unit. `cuda.laneid` (or `cuda.threadIdx.x % 32`) gives the lane.

**Launch:** blocks of {TPB} threads (4 warps), `ceil(n / {TPB})` blocks. Warp `w` = threads
`32*w .. 32*w + 31` of the grid writes `out[w]`; `out` has `ceil(n / 32)` elements (warps with no element
write nothing). Each thread reads `a` at most once.

**Read more:** {READING}
"""


def spec(a: np.ndarray, out: np.ndarray, n: int) -> dict[str, np.ndarray]:
    warps = -(-n // WARP)
    padded = np.zeros(warps * WARP, np.float64)
    padded[:n] = a
    return {"out": padded.reshape(warps, WARP).sum(axis=1).astype(np.float32)}


def _case(name: str, a, note: str) -> Case:
    a = np.asarray(a, dtype=np.float32)
    n = a.size
    out = np.full(-(-n // WARP), np.nan, np.float32)
    step = LaunchStep("warp_sum", grid=-(-n // TPB), block=TPB, args=("a", "out", "n"))
    return Case(name, {"a": a, "out": out, "n": n}, (step,), note)


def _nonzero(rng: np.random.Generator, n: int) -> np.ndarray:
    """Integers in [-50, 50] without 0: exact sums in float32, and every dropped term shows."""
    return rng.integers(1, 51, n) * rng.choice([-1, 1], n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 21)
    n, big = size(rng, 33, 63), size(rng, 897, 1023, not_multiple_of=32)
    return (
        _case("worked example n=8", [3, 1, -2, 5, 0, 4, -1, 2], "one warp with 8 elements and 24 pads"),
        _case("n=1", [-17], "one element: 31 lanes of the warp hold 0"),
        _case("random n=32", _nonzero(rng, 32), "exactly one full warp"),
        _case("powers of two n=24", 2.0 ** np.arange(24), "each lane's value is a different power of 2, so "
              "the sum says exactly which lanes were added (and which twice)"),
        _case(f"random n={n}", _nonzero(rng, n), f"one full warp, one with {n - 32} elements"),
        _case(f"random n={big}", _nonzero(rng, big), f"8 blocks; the last warp has {big % 32} elements"),
        _case("random n=4096", _nonzero(rng, 4096), "32 full blocks"),
    )




PUZZLE = Puzzle(
    slug="warp-reduce",
    number=21,
    title="Warp reduce",
    chapter=4,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("warp_sum",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_writes_per_thread(1, "out"),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced loads and stores", (ideal_coalescing(),)),
        Star(3, "registers only: no shared memory", (no_shared('shuffles need none'),)),
    ),
    hints=(
        "Every thread first gets its value: `a[i]`, or 0 when `i >= n` — and keeps going, because all 32 "
        "lanes must join every shuffle.",
        "Five steps with `d = 16, 8, 4, 2, 1`: `v += cuda.shfl_down_sync(0xffffffff, v, d)`. Afterwards "
        "lane 0 holds the warp's sum.",
        "The warp's number is `i // 32` (with `i = cuda.grid(1)`); lane 0 writes `out[i // 32] = v` if "
        "`i < n` (its warp has at least one element).",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """n elements; integer values, so every warp's float32 sum is exact (the puzzle compares exactly)."""
    a = np.random.default_rng(8021).integers(-50, 51, n).astype(np.float32)
    return _case(f"bench n={n}", a, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
