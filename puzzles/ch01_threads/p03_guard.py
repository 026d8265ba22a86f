"""Puzzle 3 — Guard: more threads than elements; the extra threads must do nothing."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread

READING = ("*GPU Glossary* — Modal: the entries *Warp* and *Thread Block* (why block sizes are rounded up "
           "to multiples of 32)")

DESCRIPTION = f"""\
# Puzzle 3 — Guard

Same job as puzzle 1, `out[i] = a[i] + 10`, but now the block has **more threads than the array has
elements**. Threads whose index is past the end must not touch the arrays at all.

**Example.** `a = [5, -3, 2]` (`n = 3`) with a block of 4 threads gives `out = [15, 7, 12]`; thread 3 does
nothing.

```
thread:   t0    t1    t2    t3
           |     |     |     x       t3: i = 3 is not < n = 3, so it skips the work
a:       [ 5  | -3  |  2  ]
out:     [ 15 |  7  | 12  ]
```

**What's new:** the *guard*, `if i < n:`. Block sizes are picked for the hardware (multiples of the
32-thread warp), not for your data, so a launch almost always has a few threads too many. Reading or
writing past the end of an array is an out-of-bounds access: on a GPU it may crash, or silently corrupt
a neighbouring array. The simulator reports it as a fault.

**Launch:** one block of `TPB` threads (8 or 32 here) with `n <= TPB`; `n` is passed to the kernel.
Each thread may read `a` once and write `out` once.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, n: int) -> dict[str, np.ndarray]:
    return {"out": a + np.float32(10)}


def _case(name: str, a: np.ndarray, block: int, note: str = "") -> Case:
    a = a.astype(np.float32)
    out = np.full_like(a, np.nan)
    step = LaunchStep("guard_kernel", grid=1, block=block, args=("out", "a", "n"))
    return Case(name, {"out": out, "a": a, "n": int(a.size)}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 3)
    n = size(rng, 17, 31)
    return (
        _case("worked example n=3, 4 threads", np.array([5, -3, 2]), 4, "the example from the description"),
        _case("random n=5, 8 threads", rng.normal(0, 10, 5), 8, "three threads too many"),
        _case(f"random n={n}, 32 threads", rng.normal(0, 10, n), 32, f"a warp with {32 - n} idle threads"),
        _case("n=1, 32 threads", np.array([-6.5]), 32, "one element, 31 idle threads"),
        _case("random n=32, 32 threads", rng.normal(0, 10, 32), 32, "no idle thread: the guard never fires"),
    )


PUZZLE = Puzzle(
    slug="guard",
    number=3,
    title="Guard",
    chapter=1,
    difficulty=1,
    description=DESCRIPTION,
    kernels=("guard_kernel",),
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
        "Run it without a check first and read the fault: which thread, which index?",
        "Only threads with `i < n` have an element. Wrap the work in an `if`.",
        "`i = cuda.threadIdx.x`, then `if i < n:` and inside it `out[i] = a[i] + 10`.",
    ),
    reading=READING,
    rtol=1e-6,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
BENCH_NOTE = ("one block by design (the kernel indexes with threadIdx only): timed at the largest block, 1,024 "
              "threads")


def bench_max() -> Case:
    """The largest valid launch: one block of 1,024 threads, 1,000 of them with an element."""
    a = np.random.default_rng(8003).standard_normal(1000, dtype=np.float32)
    return _case("bench: n=1000, one block of 1024", a, 1024, "the largest valid launch")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench_max": bench_max, "bench_note": BENCH_NOTE}))
