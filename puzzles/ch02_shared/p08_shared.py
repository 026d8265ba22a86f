"""Puzzle 8 — Shared memory: threads of a block hand values to each other (reverse each block's chunk)."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_bank_conflicts,
)

TPB = 8   # threads per block = elements per chunk

READING = ("*GPU Glossary* — Modal: the entries *Shared Memory* and *Thread Block* (memory one block shares, "
           "and the barrier that orders it)")

DESCRIPTION = f"""\
# Puzzle 8 — Shared memory

Cut the array into chunks of {TPB} elements (one chunk per block; the last chunk may be shorter) and
**reverse each chunk in place of itself**:

    chunk of block b = a[b*{TPB} : b*{TPB} + L]      (L = {TPB}, or fewer for the last chunk)
    out[b*{TPB} + t] = a[b*{TPB} + L - 1 - t]

**Example.** `a = [0, 1, 2, ..., 10]` (`n = 11`) gives
`out = [7, 6, 5, 4, 3, 2, 1, 0, 10, 9, 8]` — a full chunk of {TPB}, then a short chunk of 3.

Do it in two phases, through *shared memory* — a small, fast memory that all threads of one block can
read and write (`cuda.shared.array({TPB}, numba.float32)` gives each block its own {TPB} floats):

```
block 1, L = 3:      t0     t1     t2     t3 .. t7 (idle)
phase 1            a[8]   a[9]   a[10]
 (load)              |      |      |
shared  s:        [  8   |  9   |  10  |  ?  ...  ]
              ==== cuda.syncthreads(): every thread waits here ====
phase 2              s[2]   s[1]   s[0]            thread t reads s[L-1-t], a slot ANOTHER thread wrote
 (store)             |      |      |
out:              [ 10   |  9   |  8  ]
```

**What's new:** shared memory and the barrier `cuda.syncthreads()`. Thread 0 needs the value thread 2
loaded. Nothing makes thread 2 run first — so every thread stores, then *all* wait at the barrier, then
they read. Without the barrier it is a *data race*: the right answer some days, garbage on others. The
simulator reports the race even when the numbers happen to come out right.

Two traps: a barrier must be reached by **every** thread of the block (not inside `if i < n:` — the idle
threads of the last block would skip it), and the short last chunk has only `L` loaded slots: slots past
`L` hold garbage.

**Launch:** `ceil(n / {TPB})` blocks of {TPB} threads; `n` is passed to the kernel. Each thread may read `a`
once and write `out` once, and the kernel must use shared memory. (Reading `a[...L-1-t]` straight from
global memory would work here — the point is the hand-over, which every later puzzle builds on.)

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, n: int) -> dict[str, np.ndarray]:
    chunks = [a[s:s + TPB][::-1] for s in range(0, n, TPB)]
    return {"out": np.concatenate(chunks)}


def _case(name: str, a: np.ndarray, note: str = "") -> Case:
    a = a.astype(np.float32)
    out = np.full_like(a, np.nan)
    step = LaunchStep("reverse_kernel", grid=-(-a.size // TPB), block=TPB, args=("out", "a", "n"))
    return Case(name, {"out": out, "a": a, "n": int(a.size)}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 8)
    n = size(rng, 33, 79, not_multiple_of=8)
    return (
        _case("worked example n=11", np.arange(11),
              "the example from the description: a short last chunk of 3"),
        _case("random n=64", rng.normal(0, 10, 64), "eight full chunks"),
        _case(f"random n={n}", rng.normal(0, 10, n), f"a last chunk of {n % 8}"),
        _case("random n=7", rng.normal(0, 10, 7), "one block, one idle thread"),
        _case("random n=8", rng.normal(0, 10, 8), "exactly one chunk"),
        _case("n=1", np.array([4.5]), "one element: reversing it changes nothing"),
    )


PUZZLE = Puzzle(
    slug="shared",
    number=8,
    title="Shared Memory",
    chapter=2,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("reverse_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        must_use_shared(),
        max_global_reads_per_thread(1, "a"),
        max_global_writes_per_thread(1, "out"),
    ),
    stars=(
        Star(2, "coalesced global loads and stores", (ideal_coalescing(),)),
        Star(3, "no shared-memory bank conflicts", (no_bank_conflicts(),)),
    ),
    hints=(
        "Phase 1: each thread copies its own element of `a` into the shared array. Phase 2: each thread "
        "writes one element of `out` from the shared array. What must sit between the phases?",
        "`s = cuda.shared.array(TPB, numba.float32)`; `t = cuda.threadIdx.x`; "
        "`start = cuda.blockIdx.x * TPB`. The chunk's length is `L = min(TPB, n - start)`. Put "
        "`cuda.syncthreads()` outside every `if`.",
        "`if start + t < n: s[t] = a[start + t]`, then `cuda.syncthreads()`, then "
        "`if t < L: out[start + t] = s[L - 1 - t]`.",
    ),
    reading=READING,
    rtol=0.0,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """n elements in chunks of TPB, one block per chunk, as in the test cases."""
    a = np.random.default_rng(8008).standard_normal(n, dtype=np.float32)
    return _case(f"bench n={n}", a)


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
