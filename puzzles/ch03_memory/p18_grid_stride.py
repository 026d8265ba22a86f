"""Puzzle 18 — Grid-stride loop: a fixed grid of 256 threads handles arrays of any length."""

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

BLOCKS = 4                       # the grid never changes
TPB = 64
THREADS = BLOCKS * TPB           # 256 threads in all
N_MAX = 5000                     # the longest array among the cases
EVEN = -(-N_MAX // THREADS)      # 20: the most elements a thread needs when the work is split evenly
ALPHA = -1.5

READING = ("*GPU Glossary* — Modal: the entries *Thread Block Grid* and *Streaming Multiprocessor* (why a "
           "grid is sized to the GPU rather than to the data)")

DESCRIPTION = f"""\
# Puzzle 18 — Grid-stride loop

Compute `out[i] = alpha * x[i] + y[i]` for every `i < n` ("saxpy"), with a grid that does **not** grow
with `n`: always {BLOCKS} blocks of {TPB} threads, {THREADS} threads in all, for arrays of 1 to {N_MAX}
elements.

So each thread loops. The loop that keeps every step coalesced starts at the thread's global index and
jumps by the number of threads in the grid — a **grid-stride loop**:

```
i = cuda.grid(1)                 # 0 .. {THREADS - 1}
stride = cuda.gridsize(1)        # {THREADS}
  step 0: threads 0..{THREADS - 1} take elements    0 .. {THREADS - 1}
  step 1: threads 0..{THREADS - 1} take elements  {THREADS} .. {2 * THREADS - 1}
  step 2: ...                                       until i >= n
```

**Example** with `alpha = {ALPHA}` and `n = 3`: `x = [2, 0.5, -4]`, `y = [1, 1, 1]` gives
`out = [-2, 0.25, 7]`; threads 3..{THREADS - 1} find nothing to do.

At every step the 32 lanes of a warp touch 32 neighbouring elements: 4 sectors per array, ideal. The
CPU habit — give each thread one contiguous chunk, `i = t * chunk .. t * chunk + chunk - 1` — puts
neighbouring lanes `chunk` elements apart, so every warp load touches 32 sectors to use 4 of them.

Why size a grid to the GPU instead of the data? A launch of millions of tiny threads pays per-thread setup
(index math, guards) millions of times; a grid of a few blocks per SM pays it once per thread and the loop
body does the work. The same kernel runs any `n` without a new launch configuration.

**What's new:** a thread handling many elements, and the order in which it visits them.

**Launch:** always {BLOCKS} blocks of {TPB} threads; `n` goes up to {N_MAX}. The kernel gets `alpha` (a
float), `x`, `y`, `out` and `n`. Threads must share the work: no thread may handle more than
{2 * EVEN} elements (★★: at most {EVEN}, an even split of the longest case).

**Read more:** {READING}
"""


def spec(alpha: float, x: np.ndarray, y: np.ndarray, out: np.ndarray, n: int) -> dict[str, np.ndarray]:
    return {"out": (alpha * x.astype(np.float64) + y).astype(np.float32)}


def _case(name: str, x, y, note: str) -> Case:
    x = np.asarray(x, dtype=np.float32)
    y = np.asarray(y, dtype=np.float32)
    n = x.size
    out = np.full(n, np.nan, np.float32)
    step = LaunchStep("saxpy", grid=BLOCKS, block=TPB, args=("alpha", "x", "y", "out", "n"))
    return Case(name, {"alpha": ALPHA, "x": x, "y": y, "out": out, "n": n}, (step,), note)


def _random(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """x and y away from zero, so every element's result depends on both inputs."""
    sign = rng.choice([-1.0, 1.0], (2, n))
    return sign[0] * rng.uniform(0.5, 4, n), sign[1] * rng.uniform(0.5, 4, n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 18)
    n = size(rng, 769, 1023)
    return (
        _case("worked example n=3", [2, 0.5, -4], [1, 1, 1], "the example from the description"),
        _case("n=1", [3.0], [-0.5], "one element, 255 idle threads"),
        _case("random n=200", *_random(rng, 200), "fewer elements than threads: nobody loops"),
        _case("random n=256", *_random(rng, 256), "exactly one element per thread"),
        _case(f"random n={n}", *_random(rng, n), "four steps, the last one partial"),
        _case(f"random n={N_MAX}", *_random(rng, N_MAX),
              f"{N_MAX} = 19 * {THREADS} + {N_MAX - 19 * THREADS}: twenty steps, the last one partial"),
    )


def _share(limit: int) -> tuple:
    return (max_global_reads_per_thread(limit, "x"), max_global_reads_per_thread(limit, "y"),
            max_global_writes_per_thread(limit, "out"))


PUZZLE = Puzzle(
    slug="grid-stride",
    number=18,
    title="Grid-stride loop",
    chapter=3,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("saxpy",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(*_share(2 * EVEN), no_atomics()),
    stars=(
        Star(2, f"an even split: no thread handles more than {EVEN} elements", _share(EVEN)),
        Star(3, "coalesced: at every step a warp touches 32 neighbouring elements", (ideal_coalescing(),)),
    ),
    hints=(
        "A thread's first element is its global index `cuda.grid(1)`. How far away is its next one, if "
        "the other threads are to take everything in between?",
        f"`cuda.gridsize(1)` is the number of threads in the whole grid ({THREADS} here). Loop "
        "`while i < n:` and add it to `i` at the end of each step.",
        "`i = cuda.grid(1)`; `stride = cuda.gridsize(1)`; `while i < n:` `out[i] = alpha * x[i] + y[i]`; "
        "`i += stride`. (A `for i in range(start, n, stride):` loop works too.)",
    ),
    reading=READING,
    rtol=1e-6,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
BENCH_BLOCKS, BENCH_TPB = 1024, 256   # a grid that fills a GPU (1,024 blocks of 256 threads)


def bench(n: int) -> Case:
    """n elements. The puzzle's 4 blocks of 64 show that a grid-stride loop covers any n with a fixed grid;
    on a real GPU that fixed grid is chosen to fill the device, so the benchmark launches 1,024 x 256."""
    rng = np.random.default_rng(8018)
    x, y = rng.standard_normal((2, n), dtype=np.float32)
    buffers = {"alpha": ALPHA, "x": x, "y": y, "out": np.full(n, np.nan, np.float32), "n": n}
    step = LaunchStep("saxpy", grid=BENCH_BLOCKS, block=BENCH_TPB, args=("alpha", "x", "y", "out", "n"))
    return Case(f"bench n={n}, {BENCH_BLOCKS} blocks of {BENCH_TPB}", buffers, (step,))


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
