"""Puzzle 1 — Map: one thread per element, one block that covers the array exactly."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread

READING = ("*GPU Glossary* — Modal: the entries *Thread*, *Thread Block* and *CUDA Programming Model* "
           "(modal.com/gpu-glossary)")

DESCRIPTION = f"""\
# Puzzle 1 — Map

Add 10 to every element of an array:

    out[i] = a[i] + 10

**Example.** `a = [3, -1, 0.5, 7]` gives `out = [13, 9, 10.5, 17]`.

A GPU runs the same function — the *kernel* — on many *threads* at once. Here the launch has exactly one
thread per element, all in one *block*, and each thread finds out which element is its own by reading
`cuda.threadIdx.x`, its position inside the block (0, 1, 2, ...).

```
thread:   t0    t1    t2    t3          cuda.threadIdx.x = 0, 1, 2, 3
           |     |     |     |
a:       [ 3  | -1  | 0.5 |  7 ]
           |     |     |     |          each thread: read one, add 10, write one
out:     [ 13 |  9  | 10.5| 17 ]
```

**What's new:** everything. A kernel is written from the point of view of *one* thread; the hardware runs it
for every thread of the launch.

**Launch:** one block of `len(a)` threads (the block fits the array exactly), a grid of one block.
Each thread may read `a` once and write `out` once.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray) -> dict[str, np.ndarray]:
    return {"out": a + np.float32(10)}


def _case(name: str, a: np.ndarray, note: str = "") -> Case:
    a = a.astype(np.float32)
    out = np.full_like(a, np.nan)
    step = LaunchStep("map_kernel", grid=1, block=a.size, args=("out", "a"))
    return Case(name, {"out": out, "a": a}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 1)
    n_odd = size(rng, 33, 100, not_multiple_of=32)
    return (
        _case("worked example n=4", np.array([3, -1, 0.5, 7]), "the example from the description"),
        _case("random n=32", rng.normal(0, 10, 32), "one full warp"),
        _case(f"random n={n_odd}", rng.normal(0, 10, n_odd), "not a multiple of the 32-thread warp"),
        _case("n=1", np.array([-2.25]), "a single thread"),
        _case("random n=256", rng.normal(0, 100, 256), "eight warps"),
    )


PUZZLE = Puzzle(
    slug="map",
    number=1,
    title="Map",
    chapter=1,
    difficulty=1,
    description=DESCRIPTION,
    kernels=("map_kernel",),
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
        "Every thread runs the whole function. What is different between two threads? Only their "
        "`cuda.threadIdx.x`.",
        "Read your position into a variable, `i = cuda.threadIdx.x`, and use it as the index into both "
        "arrays.",
        "One line does it: `out[i] = a[i] + 10`.",
    ),
    reading=READING,
    rtol=1e-6,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
BENCH_NOTE = ("one block by design (the kernel indexes with threadIdx only): timed at the largest block, 1,024 "
              "threads")


def bench_max() -> Case:
    """The largest valid launch: one block of 1,024 threads."""
    a = np.random.default_rng(8001).standard_normal(1024, dtype=np.float32)
    return _case("bench: one block of 1024", a, "the largest valid launch")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench_max": bench_max, "bench_note": BENCH_NOTE}))
