"""Puzzle 9 — Pooling: each output needs three inputs; load each input once into shared memory."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_bank_conflicts,
)

TPB = 16   # threads in the one block; n <= TPB

READING = ("*Making Deep Learning Go Brrrr From First Principles* — Horace He: the section on memory "
           "bandwidth (every byte fetched from global memory should be used as often as possible)")

DESCRIPTION = f"""\
# Puzzle 9 — Pooling

Sum a sliding window of the last three elements ending at each position (elements before the start count
as 0):

    out[i] = a[i-2] + a[i-1] + a[i]

**Example.** `a = [1, 2, 3, 4, 5]` gives `out = [1, 3, 6, 9, 12]`
(`out[0] = 1`, `out[1] = 1 + 2`, `out[4] = 3 + 4 + 5`).

Every element of `a` is needed by three threads. Fetching it from global memory three times is wasted
bandwidth; instead each thread fetches **one** element into shared memory, and then reads its three
values from there:

```
a (global):    1     2     3     4     5
               |     |     |     |     |       each thread: ONE global read
s (shared):  [ 1  |  2  |  3  |  4  |  5  ]
             ===== cuda.syncthreads() =====
                         \\    |    /
thread 4:                 3 + 4 + 5 = 12        three shared reads
```

**What's new:** *reuse*. Shared memory is where a block keeps data that several of its threads need, so
that global memory is read once. The checker counts reads: at most one read of `a` per thread.

**Launch:** one block of {TPB} threads, `n <= {TPB}` (idle threads past `n`); `n` is passed to the kernel.
Each thread may read `a` once and write `out` once; the kernel must use shared memory.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, n: int) -> dict[str, np.ndarray]:
    padded = np.concatenate([np.zeros(2, a.dtype), a])
    return {"out": padded[2:] + padded[1:-1] + padded[:-2]}


def _case(name: str, a: np.ndarray, note: str = "") -> Case:
    a = a.astype(np.float32)
    out = np.full_like(a, np.nan)
    step = LaunchStep("pool_kernel", grid=1, block=TPB, args=("out", "a", "n"))
    return Case(name, {"out": out, "a": a, "n": int(a.size)}, (step,), note)


def _nonzero(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values of magnitude 0.5..2 with random signs: a dropped or doubled term always shows."""
    return rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 9)
    n = size(rng, 4, 15)
    return (
        _case("worked example n=5", np.array([1, 2, 3, 4, 5]), "the example from the description"),
        _case("random n=16", _nonzero(rng, 16), "every thread of the block works"),
        _case(f"random n={n}", _nonzero(rng, n), f"{16 - n} idle threads"),
        _case("n=1", np.array([-3.5]), "nothing before the first element"),
        _case("n=2", np.array([2.0, -0.75]), "a window that never fills"),
        _case("random n=3", _nonzero(rng, 3), "exactly one full window"),
    )


PUZZLE = Puzzle(
    slug="pooling",
    number=9,
    title="Pooling",
    chapter=2,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("pool_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        must_use_shared(),
        max_global_reads_per_thread(1, "a"),
        max_global_writes_per_thread(1, "out"),
    ),
    stars=(
        Star(2, "coalesced global loads and stores", (ideal_coalescing(),)),
        Star(3, "no shared-memory bank conflicts", (no_bank_conflicts(),)),
    ),
    hints=(
        "Two phases again: load into shared memory, barrier, compute. The compute phase reads only shared "
        "memory.",
        "`s = cuda.shared.array(TPB, numba.float32)`; thread `t` stores `a[t]` into `s[t]` if `t < n`. After "
        "`cuda.syncthreads()`, start from `s[t]` and add `s[t-1]` and `s[t-2]` only where they exist.",
        "`total = s[t]`, `if t >= 1: total += s[t - 1]`, `if t >= 2: total += s[t - 2]`, then "
        "`out[t] = total` (all inside `if t < n`).",
    ),
    reading=READING,
    rtol=1e-6,
    atol=1e-6,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
BENCH_NOTE = "one block by design (n <= TPB = 16): timed at n = 16"


def bench_max() -> Case:
    """The largest valid launch: TPB elements in the one block."""
    a = np.random.default_rng(8009).standard_normal(TPB, dtype=np.float32)
    return _case(f"bench: n={TPB}, one block", a)


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench_max": bench_max, "bench_note": BENCH_NOTE}))
