"""Puzzle 12 — Prefix sum: every block scans its own segment, each input read from global memory once."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
)

TPB = 32   # threads per block = elements per segment

READING = ("*Parallel Prefix Sum (Scan) with CUDA* — GPU Gems 3, ch. 39 (Harris, Sengupta, Owens): section "
           "39.1, what a scan is and where it is used")

DESCRIPTION = f"""\
# Puzzle 12 — Prefix sum

A *prefix sum* (an inclusive *scan*) replaces each element by the sum of everything up to and including
it. Here the array is cut into segments of {TPB} (one per block) and **each segment is scanned on its own**:

    out[i] = a[s] + a[s+1] + ... + a[i]        s = the first index of i's segment

**Example** in miniature, with segments of 4 (yours have {TPB}):

```
a:      3   1  -2   5 |  4   0.5  1  -1 |  2   6
out:    3   4   2   7 |  4   4.5 5.5 4.5 |  2   8
        --segment 0-- | ---segment 1----  | -seg 2 (short)
```

Thread `t` of a block needs elements `0..t` of its segment: element 0 is needed by all {TPB} threads.
Load the segment into shared memory once (one global read per thread), barrier, and let each thread add up
what it needs from shared memory.

**What's new:** heavy reuse — one value read by many threads of the block — and a first *scan*, the
building block of stream compaction, radix sort, and the parallel form of Mamba-style recurrences.
Adding `s[0] + ... + s[t]` in a loop is the simplest way and fine here; puzzle 28 builds the log-step
(Hillis–Steele) scan, which needs only log2({TPB}) = 5 steps per thread.

**Launch:** `ceil(n / {TPB})` blocks of {TPB} threads; the last segment may be short; `n` is passed to the
kernel. Each thread may read `a` once and write `out` once; the kernel must use shared memory; no atomics.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, n: int) -> dict[str, np.ndarray]:
    segments = [np.cumsum(a[s:s + TPB].astype(np.float64)) for s in range(0, n, TPB)]
    return {"out": np.concatenate(segments).astype(np.float32)}


def _case(name: str, a: np.ndarray, note: str = "") -> Case:
    a = a.astype(np.float32)
    out = np.full_like(a, np.nan)
    step = LaunchStep("scan_kernel", grid=-(-a.size // TPB), block=TPB, args=("out", "a", "n"))
    return Case(name, {"out": out, "a": a, "n": int(a.size)}, (step,), note)


def _nonzero(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values of magnitude 0.5..2 with random signs: a dropped or doubled term always shows."""
    return rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 12)
    n = size(rng, 98, 127)
    return (
        _case("random n=40", _nonzero(rng, 40), "two segments, the second of 8"),
        _case("random n=32", _nonzero(rng, 32), "exactly one segment"),
        _case(f"random n={n}", _nonzero(rng, n), f"four segments, the last of {n - 96}"),
        _case("random n=33", _nonzero(rng, 33),
              "a last segment of one element: it must not carry the sum over"),
        _case("integers n=64", (rng.integers(1, 10, 64) * rng.choice([-1, 1], 64)),
              "integer values: every prefix sum is exact"),
        _case("n=1", np.array([-2.5]), "one element"),
    )


PUZZLE = Puzzle(
    slug="prefix-sum",
    number=12,
    title="Prefix Sum",
    chapter=2,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("scan_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        must_use_shared(),
        max_global_reads_per_thread(1, "a"),
        max_global_writes_per_thread(1, "out"),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced global loads and stores", (ideal_coalescing(),)),
        Star(3, "no shared-memory bank conflicts", (no_bank_conflicts(),)),
    ),
    hints=(
        "Stage the block's segment in a shared array of TPB floats, then `cuda.syncthreads()`. After the "
        "barrier every thread can see the whole segment.",
        "Thread `t` owns element `i = cuda.blockIdx.x * TPB + t`. Store `a[i]` into `s[t]` when `i < n`. "
        "Then add `s[0]` through `s[t]` — indices inside the segment, not global ones.",
        "`acc = 0.0; for j in range(t + 1): acc += s[j]`, then `if i < n: out[i] = acc`.",
    ),
    reading=READING,
    # float32 sums of up to 32 values of size <= 2 (or integers <= 9), in any order
    rtol=1e-5,
    atol=1e-4,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """n elements, one segment of TPB per block, as in the test cases."""
    a = np.random.default_rng(8012).standard_normal(n, dtype=np.float32)
    return _case(f"bench n={n}", a)


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
