"""Puzzle 22 — Warp scan: an inclusive prefix sum of each warp's 32 values with shfl_up_sync."""

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

TPB = 128
WARP = 32
SENTINEL = -999_999      # no prefix sum of these inputs can equal it

READING = ("*Parallel Prefix Sum (Scan) with CUDA* — GPU Gems 3, ch. 39 (Harris, Sengupta, Owens), "
           "section 39.2.1, *A Naive Parallel Scan* — the same steps, done here in registers")

DESCRIPTION = f"""\
# Puzzle 22 — Warp scan

Each warp turns its 32 values into their running totals: lane `l` of warp `w` gets
`out[32*w + l] = a[32*w] + a[32*w + 1] + ... + a[32*w + l]` — an *inclusive scan* of the warp. Warps do not
add into each other.

Puzzle 21 folded values *down* into lane 0. A scan pulls values *up*: `cuda.shfl_up_sync(mask, v, d)`
returns the `v` of lane `lane - d` (lanes `< d` get their own `v` back — and must not add it). Five steps
with `d = 1, 2, 4, 8, 16`; after the step with distance `d`, lane `l` holds the sum of the last `2d`
values ending at `l`:

```
lane      0    1    2    3    4    5    6    7
a         3    1   -2    5    0    4   -1    2
d = 1     3    4   -1    3    5    4    3    1      v += up(v, 1)   if lane >= 1
d = 2     3    4    2    7    4    7    8    5      v += up(v, 2)   if lane >= 2
d = 4     3    4    2    7    7   11   10   12      v += up(v, 4)   if lane >= 4
```

(8 lanes shown; a warp has 32 and two more steps, d = 8 and d = 16.) Every lane calls the shuffle in
every step, even those that will not use the result: the full mask `0xffffffff` needs all 32.

**Example.** `a = [3, 1, -2, 5, 0, 4, -1, 2]` gives `out = [3, 4, 2, 7, 7, 11, 10, 12]`.

**What's new:** `shfl_up_sync` and the log-step scan in registers: no shared memory, no barrier, no
double buffer — each shuffle reads every lane's old value before any lane overwrites it.

**Launch:** blocks of {TPB} threads, `ceil(n / {TPB})` blocks; `a` and `out` are int32 (exact answers);
elements past `n` count as 0 and are not written. Each thread reads `a` once and writes `out` once.

**Read more:** {READING}
"""


def spec(a: np.ndarray, out: np.ndarray, n: int) -> dict[str, np.ndarray]:
    parts = [np.cumsum(a[s:s + WARP], dtype=np.int64) for s in range(0, n, WARP)]
    return {"out": np.concatenate(parts).astype(np.int32)}


def _case(name: str, a, note: str) -> Case:
    a = np.asarray(a, dtype=np.int32)
    n = a.size
    out = np.full(n, SENTINEL, np.int32)
    step = LaunchStep("warp_scan", grid=-(-n // TPB), block=TPB, args=("a", "out", "n"))
    return Case(name, {"a": a, "out": out, "n": n}, (step,), note)


def _nonzero(rng: np.random.Generator, n: int, high: int = 50) -> np.ndarray:
    return rng.integers(1, high + 1, n) * rng.choice([-1, 1], n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 22)
    n = size(rng, 65, 95)
    return (
        _case("worked example n=8", [3, 1, -2, 5, 0, 4, -1, 2], "the example from the description"),
        _case("n=1", [42], "one element, 31 idle lanes"),
        _case("ones n=64", np.ones(64), "out = 1, 2, ..., 32, then 1, 2, ..., 32 again: warps restart at 0"),
        _case("powers of two n=30", 1 << np.arange(30),
              "each value a different power of 2: a missing or doubled term is visible in the bits"),
        _case(f"random n={n}", _nonzero(rng, n), f"two full warps and one with {n - 64} elements"),
        _case("random n=1000", _nonzero(rng, 1000, 1000), "8 blocks, the last warp has 8 elements"),
    )




PUZZLE = Puzzle(
    slug="warp-scan",
    number=22,
    title="Warp scan",
    chapter=4,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("warp_scan",),
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
        "Get your value (0 past `n`), then five steps `d = 1, 2, 4, 8, 16`. In each, every lane calls "
        "`cuda.shfl_up_sync(0xffffffff, v, d)`; which lanes may add what comes back?",
        "Only lanes with `lane >= d` have a real partner; the others received their own value back. "
        "`t = cuda.shfl_up_sync(FULL_MASK, v, d)` then `if lane >= d: v += t`.",
        "`lane = cuda.laneid`; `d = 1`; `while d < 32:` shuffle, add, `d *= 2`. Finally `if i < n: "
        "out[i] = v`.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """n elements."""
    a = np.random.default_rng(8022).integers(-1000, 1001, n, dtype=np.int32)
    return _case(f"bench n={n}", a, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
