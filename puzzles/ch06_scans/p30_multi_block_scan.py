"""Puzzle 30 — Multi-block scan: scan an array longer than a block in three launches with a scratch buffer."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    log_step_work,
    max_global_reads_per_thread,
    max_launches,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
)

TPB = 32                 # threads per block = elements per tile; at most TPB tiles (n <= TPB * TPB)
SENTINEL = -999_999

READING = ("*Parallel Prefix Sum (Scan) with CUDA* — GPU Gems 3, ch. 39 (Harris, Sengupta, Owens), "
           "section 39.2.4, *Arrays of Arbitrary Size*")

DESCRIPTION = f"""\
# Puzzle 30 — Multi-block scan

An inclusive scan of the **whole** array, `out[i] = a[0] + ... + a[i]`, for arrays longer than one block.
Blocks cannot wait for each other inside a launch, so the work is split into three launches; the end of a
launch is the barrier between blocks.

**Example** with tiles of 4 (yours have {TPB}): `a = [2, -1, 3, 1 | 4, 0, -2, 5 | 1, 1]`

```
launch 1  scan_blocks       each block scans its tile, the tile's last thread stores the tile total
          out        = [2, 1, 4, 5 | 4, 4, 2, 7 | 1, 2]
          block_sums = [5, 7, 2]
launch 2  scan_block_sums   one block scans the totals in place (inclusive)
          block_sums = [5, 12, 14]
launch 3  add_offsets       block b > 0 adds block_sums[b - 1] to each of its elements
          out        = [2, 1, 4, 5 | 9, 9, 7, 12 | 13, 14]
```

**Launch:** three kernels, run one after the other on the same buffers:

* `scan_blocks(a, out, block_sums, n)` — grid `ceil(n / {TPB})`, block {TPB}: your puzzle-28 scan, plus
  `block_sums[b] =` the tile's total (pad the last tile with zeros so its total is right).
* `scan_block_sums(block_sums, num_blocks)` — grid 1, block {TPB}: an inclusive scan of `block_sums` in
  place (there are at most {TPB} tiles, so one block is enough).
* `add_offsets(out, block_sums, n)` — grid `ceil(n / {TPB})`, block {TPB}: `out[i] += block_sums[b - 1]`
  for every block `b > 0`.

`block_sums` is a scratch buffer of `num_blocks` int32 values that starts filled with {SENTINEL}; only `out`
is compared.

**What's new:** several launches and a scratch buffer in global memory: the *scan-then-propagate* pattern
that every library scan uses for large arrays (applied recursively when the block totals need more than
one block).

**Constraints:** each thread reads `a` at most once and `block_sums` at most twice in any launch — so the
third launch cannot add up the earlier tile totals itself; that is launch 2's job. No atomics.

**Read more:** {READING}
"""


def spec(a: np.ndarray, out: np.ndarray, block_sums: np.ndarray, n: int,
         num_blocks: int) -> dict[str, np.ndarray]:
    return {"out": np.cumsum(a, dtype=np.int64).astype(np.int32)}


def _case(name: str, a: np.ndarray, note: str) -> Case:
    a = np.asarray(a, dtype=np.int32)
    n = a.size
    num_blocks = (n + TPB - 1) // TPB
    assert num_blocks <= TPB, "launch 2 scans the block totals with one block"
    buffers = {
        "a": a,
        "out": np.full(n, SENTINEL, dtype=np.int32),
        "block_sums": np.full(num_blocks, SENTINEL, dtype=np.int32),
        "n": n,
        "num_blocks": num_blocks,
    }
    steps = (
        LaunchStep("scan_blocks", grid=num_blocks, block=TPB, args=("a", "out", "block_sums", "n")),
        LaunchStep("scan_block_sums", grid=1, block=TPB, args=("block_sums", "num_blocks")),
        LaunchStep("add_offsets", grid=num_blocks, block=TPB, args=("out", "block_sums", "n")),
    )
    return Case(name, buffers, steps, note)


def _nonzero(rng: np.random.Generator, n: int, high: int) -> np.ndarray:
    return rng.integers(1, high + 1, n) * rng.choice([-1, 1], n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 30)
    n = size(rng, 769, 799)
    return (
        _case("worked example n=10", [2, -1, 3, 1, 4, 0, -2, 5, 1, 1],
              "the example's numbers, all in one tile of 32"),
        _case("random n=64", _nonzero(rng, 64, 50),
              "two full tiles: the smallest case where launch 3 matters"),
        _case(f"random n={n}", _nonzero(rng, n, 50),
              f"25 tiles, the last with {n - 768} elements: its padding must not change its total"),
        _case("ones n=1024", np.ones(1024),
              "out[i] = i + 1 over 32 full tiles, the most one block of totals holds"),
        _case("n=1", [-5], "one element, one tile, nothing to add"),
        _case("random n=1000", _nonzero(rng, 1000, 1000),
              "32 tiles, the last partial; large mixed-sign values catch an offset from the wrong tile"),
    )


PUZZLE = Puzzle(
    slug="multi-block-scan",
    number=30,
    title="Multi-block scan",
    chapter=6,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("scan_blocks", "scan_block_sums", "add_offsets"),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    scratch=("block_sums",),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_reads_per_thread(2, "block_sums"),
        max_launches(3),
        must_use_shared(),
        no_atomics(),
    ),
    stars=(
        Star(2, "log-step block scans, coalesced in all three launches",
             (log_step_work(), ideal_coalescing())),
        Star(3, "no bank conflicts in the shared-memory scans", (no_bank_conflicts(),)),
    ),
    hints=(
        "Write the block scan once as a `@cuda.jit(device=True)` function that scans a (2, 32) shared "
        "buffer (puzzle 28) and returns which row holds the result; `scan_blocks` and `scan_block_sums` "
        "both call it.",
        "In `scan_blocks`, after the scan, thread `TPB - 1` holds the tile total (padding is 0, so this is "
        "true for the last, partial tile too): `block_sums[cuda.blockIdx.x] = buf[src, TPB - 1]`.",
        "`scan_block_sums` loads `block_sums[t]` (0 when `t >= num_blocks`), scans, and stores back where "
        "`t < num_blocks`. `add_offsets`: `if b > 0 and i < n: out[i] += block_sums[b - 1]`.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
BENCH_NOTE = "the block totals are scanned by one block, so n <= TPB * TPB = 1,024: timed at n = 1,024"


def bench_max() -> Case:
    """The largest valid launch: TPB tiles of TPB elements."""
    a = np.random.default_rng(8030).integers(-1000, 1001, TPB * TPB)
    return _case(f"bench: n={TPB * TPB}", a, "the largest valid launch")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench_max": bench_max, "bench_note": BENCH_NOTE}))
