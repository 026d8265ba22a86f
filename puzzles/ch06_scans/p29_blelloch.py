"""Puzzle 29 — Blelloch scan: a work-efficient exclusive scan (up-sweep, then down-sweep) in shared memory."""

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

TPB = 64                 # threads per block
TILE = 2 * TPB           # elements per block: each thread owns two
SENTINEL = -999_999
SHARED_BUDGET = 640      # bytes: one tile of int32 (512) plus room for padding, but not a second tile

READING = ("*Parallel Prefix Sum (Scan) with CUDA* — GPU Gems 3, ch. 39 (Harris, Sengupta, Owens), "
           "sections 39.2.2 *A Work-Efficient Parallel Scan* and 39.2.3 *Avoiding Bank Conflicts*")

DESCRIPTION = f"""\
# Puzzle 29 — Blelloch scan

An *exclusive* scan: each element becomes the sum of everything **before** it in its tile (the first
element of a tile becomes 0). Each block of {TPB} threads scans a tile of {TILE} elements, two per thread:

    out[i] = a[s] + ... + a[i-1]      (out[s] = 0, where s = the first index of i's tile)

**Example** with a tile of 8: `a = [3, 1, -2, 5, 0, 4, -1, 2]` gives `out = [0, 3, 4, 2, 7, 7, 11, 10]`.

Hillis-Steele (puzzle 28) does about n·log2(n) additions. Blelloch's scan does about 2n, in place, in one
shared array, with two passes over a balanced tree:

```
up-sweep (reduce): each level adds the left child into the right child
  index       0    1    2    3    4    5    6    7
  input       3    1   -2    5    0    4   -1    2
  offset 1    3   [4]  -2   [3]   0   [4]  -1   [1]     x[2t+1] += x[2t]
  offset 2    3    4   -2   [7]   0    4   -1   [5]     x[4t+3] += x[4t+1]
  offset 4    3    4   -2    7    0    4   -1  [12]     x[7]    += x[3]     (12 = the tile's total)
clear the root:  x[7] = 0
down-sweep: at each level, left child <- parent; right child <- parent + old left child
  offset 4    3    4   -2   [0]   0    4   -1   [7]
  offset 2    3   [0]  -2   [4]   0   [7]  -1  [11]
  offset 1   [0]  [3]  [4]  [2]  [7]  [7] [11]  [10]    = out
```

With `offset` doubling on the way up and halving on the way down, the thread `t` that is active at a
level works on the pair `left = offset*(2t+1) - 1`, `right = offset*(2t+2) - 1`. Every level ends with
`cuda.syncthreads()` — a level reads what the previous one wrote.

**What's new:** work efficiency (O(n) additions instead of O(n log n)), an in-place tree in shared memory,
and — for ★★★ — the bank conflicts that strided tree indices cause. At offset 2 the 32 active lanes of
a warp touch words 1, 5, 9, 13, ...: a stride of 4 words uses only 8 of the 32 banks, a 4-way conflict, and
larger offsets are worse. Padding every shared index with one spare word per 32 (`j + j // 32`) spreads
them over the banks.

**Launch:** `ceil(n / {TILE})` blocks of {TPB} threads; thread `t` of block `b` loads elements
`b*{TILE} + t` and `b*{TILE} + t + {TPB}` (zero past `n`) and later writes the same two. Each thread reads
`a` at most twice and writes `out` at most twice; shared memory is limited to {SHARED_BUDGET} bytes per
block (one tile plus padding — there is no room for a second buffer). int32, exact.

**Read more:** {READING}
"""


def spec(a: np.ndarray, out: np.ndarray, n: int) -> dict[str, np.ndarray]:
    tiles = []
    for s in range(0, n, TILE):
        inclusive = np.cumsum(a[s:s + TILE], dtype=np.int64)
        tiles.append(np.concatenate(([0], inclusive[:-1])))
    return {"out": np.concatenate(tiles).astype(np.int32)}


def _case(name: str, a: np.ndarray, note: str) -> Case:
    a = np.asarray(a, dtype=np.int32)
    n = a.size
    out = np.full(n, SENTINEL, dtype=np.int32)
    step = LaunchStep("blelloch_kernel", grid=(n + TILE - 1) // TILE, block=TPB, args=("a", "out", "n"))
    return Case(name, {"a": a, "out": out, "n": n}, (step,), note)


def _nonzero(rng: np.random.Generator, n: int, high: int) -> np.ndarray:
    return rng.integers(1, high + 1, n) * rng.choice([-1, 1], n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 29)
    n = size(rng, 257, 319)
    n_half = size(rng, 193, 255)
    return (
        _case("worked example n=8", [3, 1, -2, 5, 0, 4, -1, 2], "the example from the description"),
        _case("random n=128", _nonzero(rng, 128, 50), "exactly one full tile of 128"),
        _case("ones n=128", np.ones(128),
              "out[i] = i: an inclusive scan or a shifted result is easy to spot"),
        _case(f"random n={n}", _nonzero(rng, n, 50),
              f"three tiles, the last with {n - 256} elements (fewer than the 64 threads: some load only zeros)"),
        _case("n=1", [42], "a single element: its exclusive prefix is 0"),
        _case("random n=257", _nonzero(rng, 257, 1000),
              "the last tile holds one element; each tile starts again at 0"),
        _case(f"half-full last tile n={n_half}", _nonzero(rng, n_half, 50),
              f"two tiles, the last with {n_half - 128} elements: every thread loads its first element and "
              "only some their second (i0 + 64)"),
    )


PUZZLE = Puzzle(
    slug="blelloch",
    number=29,
    title="Blelloch scan",
    chapter=6,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("blelloch_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(2, "a"),
        max_global_writes_per_thread(2, "out"),
        must_use_shared(),
        shared_memory_budget(SHARED_BUDGET),
        no_atomics(),
    ),
    stars=(
        Star(2, "a tree, not a loop; coalesced: load and store elements t and t + 64, not 2t and 2t + 1",
             (log_step_work(), ideal_coalescing())),
        Star(3, "no bank conflicts: pad the shared index (one spare word per 32)", (no_bank_conflicts(),)),
    ),
    hints=(
        "Three phases, each level separated by `cuda.syncthreads()`: up-sweep with offset 1, 2, ..., 64 "
        "(at offset `o`, the first 64 // o threads work); one thread sets the last slot to 0; down-sweep "
        "with offset 64, 32, ..., 1 (at offset `o`, the first 64 // o threads work).",
        "Up-sweep step for an active thread: `s[right] += s[left]`. Down-sweep step: "
        "`old = s[left]; s[left] = s[right]; s[right] += old`, with `left = o*(2t+1) - 1` and "
        "`right = o*(2t+2) - 1`.",
        "For ★★★ write every shared index `j` as `j + (j >> 5)` (a small `@cuda.jit(device=True)` helper) "
        "and size the shared array 128 + 4. For ★★ load `a[base + t]` and `a[base + t + 64]`: each load is "
        "then a row of 64 neighbouring elements.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """n elements, one tile of TILE per block."""
    a = np.random.default_rng(8029).integers(-1000, 1001, n, dtype=np.int32)
    return _case(f"bench n={n}", a, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
