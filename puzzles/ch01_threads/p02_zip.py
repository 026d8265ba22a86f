"""Puzzle 2 — Zip: combine two arrays element by element."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread

READING = ("*Making Deep Learning Go Brrrr From First Principles* — Horace He: the section on memory "
           "bandwidth (why an element-wise op is limited by memory, not arithmetic)")

DESCRIPTION = f"""\
# Puzzle 2 — Zip

Add two arrays of the same length, element by element:

    out[i] = a[i] + b[i]

**Example.** `a = [1, 2, 3]`, `b = [10, -20, 0.5]` give `out = [11, -18, 3.5]`.

```
thread:   t0     t1     t2
a:      [  1  |   2  |  3  ]
b:      [ 10  | -20  | 0.5 ]       thread i reads a[i] and b[i] ...
out:    [ 11  | -18  | 3.5 ]       ... and writes out[i]
```

**What's new:** a kernel can take several arrays. Thread `i` works on position `i` of each of them.
An element-wise op like this one does one addition per 12 bytes moved (two 4-byte reads, one 4-byte
write): on a real GPU its speed is set by memory bandwidth, not by arithmetic.

**Launch:** one block of `len(a)` threads, a grid of one block. Each thread may read `a` once, `b` once,
and write `out` once.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    return {"out": a + b}


def _case(name: str, a: np.ndarray, b: np.ndarray, note: str = "") -> Case:
    a, b = a.astype(np.float32), b.astype(np.float32)
    out = np.full_like(a, np.nan)
    step = LaunchStep("zip_kernel", grid=1, block=a.size, args=("out", "a", "b"))
    return Case(name, {"out": out, "a": a, "b": b}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 2)
    n = size(rng, 33, 200, not_multiple_of=32)
    return (
        _case("worked example n=3", np.array([1, 2, 3]), np.array([10, -20, 0.5]),
              "the example from the description"),
        _case("random n=40", rng.normal(0, 10, 40), rng.normal(100, 10, 40),
              "a and b on different scales, so using one of them twice cannot pass"),
        _case(f"random n={n}", rng.normal(0, 10, n), rng.normal(0, 10, n), "not a multiple of the warp"),
        _case("n=1", np.array([0.75]), np.array([-4.0]), "a single thread"),
    )


PUZZLE = Puzzle(
    slug="zip",
    number=2,
    title="Zip",
    chapter=1,
    difficulty=1,
    description=DESCRIPTION,
    kernels=("zip_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_reads_per_thread(1, "b"),
        max_global_writes_per_thread(1, "out"),
    ),
    stars=(
        Star(2, "coalesced: neighbouring threads touch neighbouring elements", (ideal_coalescing(),)),
    ),
    hints=(
        "This is puzzle 1 with a second input array.",
        "Take `i = cuda.threadIdx.x` and use it for `a`, `b` and `out` alike.",
        "`out[i] = a[i] + b[i]`.",
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
    rng = np.random.default_rng(8002)
    a, b = rng.standard_normal((2, 1024), dtype=np.float32)
    return _case("bench: one block of 1024", a, b, "the largest valid launch")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench_max": bench_max, "bench_note": BENCH_NOTE}))
