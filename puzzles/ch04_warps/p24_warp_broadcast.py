"""Puzzle 24 — Warp broadcast: subtract each warp's maximum from its values (the softmax trick)."""

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

READING = ("*FlashAttention* (2022) — Dao et al., section 3.1: softmax computed block by block, each block "
           "shifted by its own running maximum")

DESCRIPTION = f"""\
# Puzzle 24 — Warp broadcast

Each warp finds the **maximum** of its values and every lane subtracts it:
`out[i] = a[i] - max(a[32*w .. 32*w + 31])` for the warp `w` that holds `i` (the last warp may be partial:
only its real elements count).

This is the first step of a numerically safe softmax: `exp(x - max)` never overflows, and every row (or
tile, as in FlashAttention) needs its own max, shared by all the threads that work on it.

Two parts:
1. **Reduce** the warp's values to their max, as in puzzle 21 but with `max` instead of `+`. After the
   `shfl_down_sync` steps only **lane 0** holds the answer.
2. **Broadcast** it: `cuda.shfl_sync(mask, v, 0)` returns lane 0's `v` to every lane.

```
lane:    0     1     2   ...  31
v:       3.5  -1.0   7.25 ...  0.5
reduce   m = 9.0 in lane 0 (other lanes hold partial maxima)
shfl_sync(FULL, m, 0)  ->  9.0   9.0   9.0  ...  9.0
out:    -5.5 -10.0  -1.75 ... -8.5
```

(`shfl_xor_sync` with distances 16, 8, 4, 2, 1 — a *butterfly* — leaves the max in every lane at once;
either way is fine.) Careful with the padding of a partial warp: a lane with no element must not win the
max. Pad with `-inf`, not 0 — a warp of negative numbers would otherwise get max 0.

**Example** (a warp of 4 real elements, 28 padding lanes): `a = [3.5, -1, 7.25, 9]` -> max 9 ->
`out = [-5.5, -10, -1.75, 0]`.

**What's new:** `shfl_sync` with a fixed source lane — one lane's register delivered to all 32 — and
choosing the identity element (`-inf` for max) for idle lanes.

**Launch:** blocks of {TPB} threads, `ceil(n / {TPB})` blocks; float32 in and out. Each thread reads `a` once
and writes `out` once.

**Read more:** {READING}
"""


def spec(a: np.ndarray, out: np.ndarray, n: int) -> dict[str, np.ndarray]:
    result = np.empty(n, np.float32)
    for s in range(0, n, WARP):
        seg = a[s:s + WARP]
        result[s:s + WARP] = seg - seg.max()
    return {"out": result}


def _case(name: str, a, note: str) -> Case:
    a = np.asarray(a, dtype=np.float32)
    n = a.size
    step = LaunchStep("subtract_warp_max", grid=-(-n // TPB), block=TPB, args=("a", "out", "n"))
    return Case(name, {"a": a, "out": np.full(n, np.nan, np.float32), "n": n}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 24)
    quarters = rng.uniform(-100, 100, 64).round(2)
    quarters[5], quarters[40] = 250.0, 123.5          # each warp's max in a different lane
    n = size(rng, 257, 383, not_multiple_of=32)
    return (
        _case("worked example n=4", [3.5, -1, 7.25, 9], "the example from the description"),
        _case("n=1 negative", [-2.5], "one element: its own max, out = 0"),
        _case("two warps n=64", quarters, "the maxima sit in lanes 5 and 8, not in lane 0"),
        _case("all negative n=45", -rng.uniform(1, 50, 45),
              "every value negative, the last warp partial: padding with 0 would win the max"),
        _case(f"random n={n}", rng.standard_normal(n) * 10, f"3 blocks, the last warp has {n % 32} elements"),
        _case("random n=1024", rng.standard_normal(1024) * 10, "8 full blocks"),
    )




PUZZLE = Puzzle(
    slug="warp-broadcast",
    number=24,
    title="Warp broadcast",
    chapter=4,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("subtract_warp_max",),
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
        "Read your value once (`-inf` when `i >= n`: `numba.float32(-math.inf)`); every lane keeps going, "
        "since all 32 take part in each shuffle.",
        "Reduce: `m = max(m, cuda.shfl_down_sync(FULL_MASK, m, d))` for `d = 16, 8, 4, 2, 1`. Then "
        "`m = cuda.shfl_sync(FULL_MASK, m, 0)` hands lane 0's max to everyone.",
        "Finally `if i < n: out[i] = v - m`, using the `v` you already hold (no second read of `a`).",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """n elements."""
    a = np.random.default_rng(8024).standard_normal(n, dtype=np.float32) * np.float32(10)
    return _case(f"bench n={n}", a, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
