"""Puzzle 6 — Blocks: a grid of several blocks; each thread computes its global index."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread

READING = ("*GPU Glossary* — Modal: the entries *Thread Block Grid* and *Streaming Multiprocessor* (why "
           "work is cut into blocks)")

DESCRIPTION = f"""\
# Puzzle 6 — Blocks

Add 10 to every element again — `out[i] = a[i] + 10` — but the array is now longer than one block, so the
launch has a **grid of several blocks**.

**Example.** `n = 10`, blocks of 4 threads, a grid of 3 blocks:

```
block:          blockIdx.x = 0          1                 2
thread:        t0  t1  t2  t3     t0  t1  t2  t3     t0  t1  t2  t3
global i:       0   1   2   3      4   5   6   7      8   9   -   -     i = 2*4 + 2 = 10 >= n: idle
```
Thread 1 of block 2 handles element `2 * 4 + 1 = 9`.

**What's new:** `cuda.threadIdx.x` only says where a thread sits *inside its block*; every block has a
thread 0. The element a thread owns is

    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x

(`cuda.grid(1)` computes the same number). The grid is rounded up to whole blocks, so the last block
usually has idle threads: keep the guard. A GPU spreads blocks over its streaming multiprocessors; blocks
may run in any order and cannot wait for one another.

**Launch:** `ceil(n / TPB)` blocks of `TPB` threads (TPB is 4, 32, 64 or 128 here — don't assume one);
`n` is passed to the kernel. Each thread may read `a` once and write `out` once.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, n: int) -> dict[str, np.ndarray]:
    return {"out": a + np.float32(10)}


def _case(name: str, a: np.ndarray, tpb: int, note: str = "") -> Case:
    a = a.astype(np.float32)
    out = np.full_like(a, np.nan)
    grid = -(-a.size // tpb)
    step = LaunchStep("blocks_kernel", grid=grid, block=tpb, args=("out", "a", "n"))
    return Case(name, {"out": out, "a": a, "n": int(a.size)}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 6)
    big, small = size(rng, 897, 1023), size(rng, 289, 319)
    return (
        _case("worked example n=10, 3 blocks of 4", np.arange(10) * 1.5 - 4, 4,
              "the example from the description"),
        _case(f"random n={big}, 8 blocks of 128", rng.normal(0, 10, big), 128,
              "the last block is partly idle"),
        _case("random n=256, 4 blocks of 64", rng.normal(0, 10, 256), 64, "the blocks fit exactly"),
        _case("random n=33, 2 blocks of 32", rng.normal(0, 10, 33), 32,
              "the second block has a single working thread"),
        _case(f"random n={small}, 10 blocks of 32", rng.normal(0, 10, small), 32, "many small blocks"),
        _case("n=1, 1 block of 32", np.array([7.25]), 32, "one element"),
    )


PUZZLE = Puzzle(
    slug="blocks",
    number=6,
    title="Blocks",
    chapter=1,
    difficulty=1,
    description=DESCRIPTION,
    kernels=("blocks_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_writes_per_thread(1, "out"),
    ),
    stars=(
        Star(2, "coalesced: neighbouring threads touch neighbouring elements", (ideal_coalescing(),)),
    ),
    hints=(
        "With `i = cuda.threadIdx.x` every block writes the same first few elements. Which number tells "
        "the blocks apart?",
        "Block `b` starts at element `b * blockDim.x`; add the thread's place inside the block.",
        "`i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`, then `if i < n: out[i] = a[i] + 10`.",
    ),
    reading=READING,
    rtol=1e-6,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """n elements, blocks of 256 threads."""
    a = np.random.default_rng(8006).standard_normal(n, dtype=np.float32)
    return _case(f"bench n={n}", a, 256)


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
