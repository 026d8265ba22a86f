"""Puzzle 47 — Magnitude pruning: zero the small weights of each row and count the survivors."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    no_atomics,
)

TPB = 64                 # threads per block; one block per row
C_MAX = 200              # the longest row among the cases
ROUNDS = (C_MAX + TPB - 1) // TPB   # 4: each thread handles at most this many weights of its row
SENTINEL = -7

READING = ("PyTorch *Pruning Tutorial* (`torch.nn.utils.prune`, `l1_unstructured`); and *The Lottery "
           "Ticket Hypothesis* (2018) — Frankle, Carbin, section 2 (magnitude pruning)")

DESCRIPTION = f"""\
# Puzzle 47 — Magnitude pruning

The simplest way to prune a network: weights close to zero matter least, so set every weight whose
magnitude is below a threshold to zero. Then count, per row, how many weights survive — the row's
density, which tells you how sparse the layer became (and whether a sparse format pays off).

    pruned[r, c] = w[r, c]   if |w[r, c]| >= threshold,   else 0
    kept[r]      = the number of c with |w[r, c]| >= threshold

A weight exactly at the threshold survives. The thresholds here (0.5, 0.375) are exact in binary, and
the weights include values exactly at `+threshold` and `-threshold`.

**Example** with `threshold = 0.5`:

```
w      = [[ 0.9, -0.2, 0.5, -0.7, 0.1,  0.0, -1.25, 0.45 ],
          [-0.5,  0.3, 2.0, -0.05, 0.6, -0.49, 0.5, -3.0 ]]
pruned = [[ 0.9,  0,   0.5, -0.7, 0,    0,   -1.25, 0    ],     kept = [4,
          [-0.5,  0,   2.0,  0,   0.6,  0,    0.5, -3.0  ]]             5]
```

**What's new:** counting across a block without atomics. `cuda.syncthreads_count(p)` is a barrier that
also returns, to every thread, how many threads of the block passed a non-zero `p` (an int, not a bool).
Because it is a barrier, **every** thread of the block must call it the same number of times — also the
threads whose column is past the end of the row:

```
row r with C = 200 columns, block of {TPB} threads:
    round 0: columns   0..63    count += syncthreads_count(keep)
    round 1: columns  64..127   count += ...
    round 2: columns 128..191   count += ...
    round 3: columns 192..255   (only 8 real columns; the other 56 threads pass 0)
```

(A shared-memory tree sum of per-thread counts works as well.)

**Launch:** one block of {TPB} threads per row (`grid = rows`); rows have from 1 to {C_MAX} columns, not
always a multiple of {TPB}. `threshold` is a float. Each thread reads and writes at most {ROUNDS} weights;
one thread writes `kept[r]`. ★★: no atomics. ★★★: coalesced — in each round, thread `t` takes column
`round * {TPB} + t`, and the threads write `pruned` with **one** store (`x if keep else 0.0`): a store in
each branch of an `if` is two half-empty requests that touch the same sectors twice.

**Read more:** {READING}
"""


def spec(w: np.ndarray, threshold: float, pruned: np.ndarray, kept: np.ndarray) -> dict[str, np.ndarray]:
    keep = np.abs(w.astype(np.float64)) >= threshold
    return {"pruned": np.where(keep, w, np.float32(0)).astype(np.float32),
            "kept": keep.sum(axis=1).astype(np.int32)}


def _case(name: str, w: np.ndarray, threshold: float, note: str) -> Case:
    w = np.asarray(w, dtype=np.float32)
    rows, cols = w.shape
    assert cols <= C_MAX
    buffers = {
        "w": w,
        "threshold": float(threshold),
        "pruned": np.full((rows, cols), np.nan, dtype=np.float32),
        "kept": np.full(rows, SENTINEL, dtype=np.int32),
    }
    step = LaunchStep("prune_rows", grid=rows, block=TPB, args=("w", "threshold", "pruned", "kept"))
    return Case(name, buffers, (step,), note)


def _weights(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Multiples of 1/16 in [-2, 2]: exact in float32, so +-0.5 and +-0.375 occur exactly (ties)."""
    return rng.integers(-32, 33, shape) / 16


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 47)
    mixed = _weights(rng, (3, 104))
    mixed[0] = rng.choice([-2.0, -0.5, 0.5, 1.0], 104)           # every weight survives
    mixed[1] = rng.choice([-0.4375, -0.0625, 0.0, 0.25, 0.4375], 104)   # none survives
    mixed[2] = rng.choice([-0.5, 0.5, -0.4375, 0.4375], 104)      # only ties and near misses
    one_column = _weights(rng, (7, 1))
    one_column[3, 0] = -0.5                                       # a tie in the smallest case too
    example = [[0.9, -0.2, 0.5, -0.7, 0.1, 0.0, -1.25, 0.45],
               [-0.5, 0.3, 2.0, -0.05, 0.6, -0.49, 0.5, -3.0]]
    rows = size(rng, 8, 32)
    return (
        _case("worked example 2x8", example, 0.5, "the example from the description"),
        _case(f"random {rows}x200", _weights(rng, (rows, C_MAX)), 0.5,
              "200 = 3 full rounds of 64 and a last round with 8 columns"),
        _case("random 10x64", _weights(rng, (10, 64)), 0.375, "exactly one round: no idle thread"),
        _case("one column, 7 rows", one_column, 0.5, "63 of 64 threads have no column"),
        _case("all, none, ties: 3x104", mixed, 0.5,
              "row 0 keeps everything, row 1 nothing, row 2 only the weights exactly at +-0.5"),
    )


PUZZLE = Puzzle(
    slug="prune-threshold",
    number=47,
    title="Magnitude pruning",
    chapter=7,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("prune_rows",),
    spec=spec,
    make_cases=make_cases,
    outputs=("pruned", "kept"),
    constraints=(
        max_global_reads_per_thread(ROUNDS, "w"),
        max_global_writes_per_thread(ROUNDS, "pruned"),
        max_global_writes_per_thread(1, "kept"),
    ),
    stars=(
        Star(2, "no atomics: count with a block-wide reduction", (no_atomics(),)),
        Star(3, "coalesced: neighbouring threads take neighbouring columns", (ideal_coalescing(),)),
    ),
    hints=(
        "Loop `for c0 in range(0, C, TPB)` with `c = c0 + t`. Threads with `c < C` read the weight, decide "
        "`keep = 1 if abs(x) >= threshold else 0`, and write `pruned[row, c] = x if keep else 0.0`.",
        "Outside that `if`, every thread adds `cuda.syncthreads_count(keep)` to a running `count` (threads "
        "past the end pass keep = 0). Start each round with `keep = 0`.",
        "After the loop every thread holds the row's total; `if t == 0: kept[row] = count`.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n weights: rows of C_MAX columns (the longest the puzzle allows), one block per row."""
    w = _weights(np.random.default_rng(8047), (max(1, n // C_MAX), C_MAX))
    return _case(f"bench {w.shape[0]}x{C_MAX}", w, 0.5, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
