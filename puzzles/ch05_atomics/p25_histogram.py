"""Puzzle 25 — Histogram: count in shared memory with atomics, then merge each block once into global."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_atomics,
    shared_memory_budget,
)

BINS = 100
BLOCKS = 4
TPB = 128
THREADS = BLOCKS * TPB            # 512
N_MAX = 8192                      # 16 values per thread at most
PER_THREAD = N_MAX // THREADS

READING = ("*GPU Glossary* — Modal: the entry *Shared Memory* (on-chip, per block: where private copies "
           "of a small table belong)")

DESCRIPTION = f"""\
# Puzzle 25 — Histogram

Count how often each value occurs: `values` holds `n` integers in `0 .. {BINS - 1}`; afterwards
`hist[b]` must be the number of `i` with `values[i] == b`. `hist` starts at all zeros.

**Example.** `values = [3, 1, 3, 0, 3, 99]` gives `hist[0] = 1`, `hist[1] = 1`, `hist[3] = 3`,
`hist[99] = 1`, every other bin 0.

Many threads may hit the same bin at the same moment, so `hist[b] += 1` would lose counts (two threads
read 5, both write 6). `cuda.atomic.add(hist, b, 1)` makes the read-add-write one indivisible step. But
atomics on one *global* address are served one after another by the memory system: a popular bin turns
thousands of threads into a queue. On an H200, 2^26 values into 100 bins:

```
one global atomic per value, uniform values         15.0 ms
one global atomic per value, 90% in one bin         47.0 ms
per-block histogram in shared memory, then merged    0.42-0.46 ms   (either distribution)
```

The fast version works in three phases inside each block:

```
1. zero a shared histogram            sh[b] = 0                  (threads share the {BINS} bins)
   cuda.syncthreads()
2. count this block's values          cuda.atomic.add(sh, v, 1)  (shared atomics: fast, on-chip)
   cuda.syncthreads()
3. merge: one global atomic per bin   cuda.atomic.add(hist, b, sh[b])   (skip bins that are 0)
```

Global atomics drop from one per value to at most {BINS} per block.

**What's new:** atomics — correct concurrent updates — and *privatisation*: give each block its own
copy, combine at the end.

**Launch:** always {BLOCKS} blocks of {TPB} threads; `n` is at most {N_MAX}, so each thread walks the array
with a grid-stride loop (puzzle 18) and handles at most {PER_THREAD} values. At most {BINS * 4} bytes of
shared memory per block.

**Read more:** {READING}
"""


def spec(values: np.ndarray, hist: np.ndarray, n: int) -> dict[str, np.ndarray]:
    return {"hist": np.bincount(values, minlength=BINS).astype(np.int32)}


def _case(name: str, values, note: str) -> Case:
    values = np.asarray(values, dtype=np.int32)
    buffers = {"values": values, "hist": np.zeros(BINS, np.int32), "n": int(values.size)}
    step = LaunchStep("histogram", grid=BLOCKS, block=TPB, args=("values", "hist", "n"))
    return Case(name, buffers, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 25)
    n_skew = size(rng, 2001, 4000)
    skewed = np.where(rng.random(n_skew) < 0.5, 7, rng.integers(0, BINS, n_skew))
    return (
        _case("worked example n=6", [3, 1, 3, 0, 3, 99], "the example from the description"),
        _case("n=1", [42], "one value: one bin is 1, 99 bins stay 0"),
        _case("every bin once n=100", rng.permutation(BINS), "each bin exactly 1: a lost or doubled count shows"),
        _case("one bin n=5000", np.full(5000, BINS - 1), "every thread hits the last bin: heavy contention"),
        _case(f"skewed n={n_skew}", skewed, "half of the values in bin 7, the rest spread out"),
        _case(f"random n={N_MAX}", rng.integers(0, BINS, N_MAX), f"exactly {PER_THREAD} values per thread"),
    )


PUZZLE = Puzzle(
    slug="histogram",
    number=25,
    title="Histogram",
    chapter=5,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("histogram",),
    spec=spec,
    make_cases=make_cases,
    outputs=("hist",),
    constraints=(
        must_use_atomics(),
        max_global_reads_per_thread(PER_THREAD, "values"),
        shared_memory_budget(BINS * 4),
    ),
    stars=(
        Star(2, "coalesced: a grid-stride loop reads neighbouring values", (ideal_coalescing(),)),
        Star(3, "fewer global atomics than values: at most one per thread (merge each block's counts once)",
             (max_global_writes_per_thread(1, "hist"),)),
    ),
    hints=(
        "First make it correct: a grid-stride loop and `cuda.atomic.add(hist, values[i], 1)`. Then count "
        "how many global atomics one thread issues.",
        f"Declare `sh = cuda.shared.array(BINS, numba.int32)`. Thread `t` zeroes bins `t, t + {TPB}, ...` "
        f"(with {BINS} bins: just bin `t` if `t < {BINS}`); barrier; the loop adds into `sh`; barrier.",
        "Merge: `if t < BINS and sh[t] > 0: cuda.atomic.add(hist, t, sh[t])`.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
BENCH_BLOCKS = 1024   # a grid that fills a GPU; the puzzle's 4 blocks show the grid-stride loop


def bench(n: int) -> Case:
    """n values over the BINS bins, 1,024 blocks of TPB threads (the kernel's loop strides over any grid)."""
    values = np.random.default_rng(8025).integers(0, BINS, n, dtype=np.int32)
    buffers = {"values": values, "hist": np.zeros(BINS, np.int32), "n": n}
    step = LaunchStep("histogram", grid=BENCH_BLOCKS, block=TPB, args=("values", "hist", "n"))
    return Case(f"bench n={n}, {BENCH_BLOCKS} blocks", buffers, (step,))


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
