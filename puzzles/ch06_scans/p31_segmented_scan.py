"""Puzzle 31 — Segmented scan: an inclusive scan that restarts at every segment head (flags[i] == 1)."""

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

TPB = 128                # one block; n <= TPB
SENTINEL = -999_999

READING = ("*Parallel Prefix Sum (Scan) with CUDA* — GPU Gems 3, ch. 39 (Harris, Sengupta, Owens): "
           "scan with other operators, and the applications in section 39.3")

DESCRIPTION = f"""\
# Puzzle 31 — Segmented scan

Many sequences packed into one array (variable-length prompts in a batch, rows of a sparse matrix) are
marked by a `flags` array: `flags[i] == 1` means a new segment starts at `i`. Compute an inclusive scan
that restarts at every head:

    out[i] = a[h] + a[h+1] + ... + a[i]      where h = the last head at or before i (0 if there is none)

**Example:**

```
a      =  3   1   4   1   5   9   2   6
flags  =  1   0   0   1   0   0   0   1
out    =  3   4   8   1   6  15  17   6
         \\_________/ \\_____________/ \\_/
```

One block of {TPB} threads scans `n <= {TPB}` elements. Scan **pairs** `(flag, value)` instead of values,
with this operator for "left part, then right part":

    (f_left, v_left) ⊕ (f_right, v_right) = (f_left OR f_right,  v_right if f_right else v_left + v_right)

It is associative, so the Hillis-Steele steps of puzzle 28 work unchanged — only the "add" becomes ⊕.
The flag of a partial result says "this range contains a head": once a thread's range has crossed a
head, nothing further left may be added. Use the flags your partial results carry, not only the
original `flags[t]`: a head can sit strictly between `t - offset` and `t`.

**What's new:** a scan is not only a prefix *sum*: any associative operator works, and carrying a flag
with each value turns one scan into many independent ones.

**Launch:** one block of {TPB} threads, thread `t` owns element `t`; pad past `n` with `(0, 0)`. Each
thread reads `a` once and `flags` once and writes `out` once. Up to {4 * TPB * 4} bytes of shared memory
(two double-buffered int32 arrays). int32, exact.

**Read more:** {READING}
"""


def spec(a: np.ndarray, flags: np.ndarray, out: np.ndarray, n: int) -> dict[str, np.ndarray]:
    total = np.cumsum(a, dtype=np.int64)
    idx = np.arange(n)
    head = np.maximum.accumulate(np.where(flags != 0, idx, 0))      # the last head at or before i (or 0)
    before_head = np.where(head > 0, total[head - 1], 0)            # what was summed before that head
    return {"out": (total - before_head).astype(np.int32)}


def _case(name: str, a: np.ndarray, flags: np.ndarray, note: str) -> Case:
    a = np.asarray(a, dtype=np.int32)
    flags = np.asarray(flags, dtype=np.int32)
    n = a.size
    out = np.full(n, SENTINEL, dtype=np.int32)
    step = LaunchStep("segmented_scan_kernel", grid=1, block=TPB, args=("a", "flags", "out", "n"))
    return Case(name, {"a": a, "flags": flags, "out": out, "n": n}, (step,), note)


def _nonzero(rng: np.random.Generator, n: int, high: int) -> np.ndarray:
    return rng.integers(1, high + 1, n) * rng.choice([-1, 1], n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 31)
    n = size(rng, 65, 120)
    sparse = (rng.random(TPB) < 0.12).astype(np.int32)
    sparse[0] = 0                                   # element 0 starts a segment even without a flag
    dense = (rng.random(n) < 0.4).astype(np.int32)
    ragged = np.zeros(TPB, np.int32)
    ragged[[1, 2, 3, 37, 38, 64, 65, 66, 127]] = 1   # short, long, and heads on both sides of the warp line
    return (
        _case("worked example n=8", [3, 1, 4, 1, 5, 9, 2, 6], [1, 0, 0, 1, 0, 0, 0, 1],
              "the example from the description"),
        _case("random n=128, few heads", _nonzero(rng, TPB, 50), sparse,
              "long segments, some crossing the warp boundary at 32, 64, 96; no flag on element 0"),
        _case(f"random n={n}, many heads", _nonzero(rng, n, 50), dense,
              f"short segments; {TPB - n} threads past n must not disturb anything"),
        _case("no heads n=128", _nonzero(rng, TPB, 50), np.zeros(TPB),
              "all flags 0: a plain inclusive scan"),
        _case("every element a head n=77", _nonzero(rng, 77, 50), np.ones(77), "out == a"),
        _case("ragged heads n=128", _nonzero(rng, TPB, 1000), ragged,
              "segments of length 1, 34, 26, 61 and a last one of 1: heads between t - offset and t"),
        _case("n=1", [-9], [0], "a single element"),
    )


PUZZLE = Puzzle(
    slug="segmented-scan",
    number=31,
    title="Segmented scan",
    chapter=6,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("segmented_scan_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_reads_per_thread(1, "flags"),
        max_global_writes_per_thread(1, "out"),
        must_use_shared(),
        shared_memory_budget(4 * TPB * 4),
        no_atomics(),
    ),
    stars=(
        Star(2, "log-step: log2(128) rounds of the pair operator, not a loop over the segment",
             (log_step_work(),)),
        Star(3, "coalesced, and no bank conflicts", (ideal_coalescing(), no_bank_conflicts())),
    ),
    hints=(
        "Start from your puzzle-28 kernel with two double-buffered shared arrays: `vals` and `heads`, both "
        "(2, 128) int32. Each step combines `(heads[src, t - offset], vals[src, t - offset])` on the left "
        "with `(heads[src, t], vals[src, t])` on the right.",
        "The combine, for `t >= offset`: `if f == 0: v += vals[src, t - offset]` then "
        "`f = f | heads[src, t - offset]` — in that order, using the right side's *current* flag `f`.",
        "Write both `vals[1 - src, t] = v` and `heads[1 - src, t] = f`, then `cuda.syncthreads()` and swap "
        "`src`. After log2(128) = 7 steps, `out[t] = vals[src, t]` for `t < n`.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
BENCH_NOTE = "one block by design (n <= TPB = 128): timed at n = 128"


def bench_max() -> Case:
    """The largest valid launch: TPB elements in the one block."""
    rng = np.random.default_rng(8031)
    a, flags = rng.integers(-50, 51, TPB), (rng.random(TPB) < 0.1).astype(np.int32)
    return _case(f"bench: n={TPB}, one block", a, flags, "the largest valid launch")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench_max": bench_max, "bench_note": BENCH_NOTE}))
