"""Puzzle 10 — Dot product: per-block partial sums by a tree reduction in shared memory."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
)

TPB = 64   # threads per block = elements per block's segment

READING = ("GPU MODE lectures — lecture 9, *Reductions* (Mark Saroufim): tree reductions in shared memory, "
           "and how the choice of addressing affects divergence and bank conflicts")

DESCRIPTION = f"""\
# Puzzle 10 — Dot product

Compute the dot product `a · b = a[0]*b[0] + a[1]*b[1] + ...`, one block at a time. Block `j` owns the
segment `a[j*{TPB} : (j+1)*{TPB}]` (the last one may be short) and writes **one number**, its partial sum:

    out[j] = sum(a[i] * b[i] for i in block j's segment)

The full dot product is `out.sum()`. Adding up the few partials is a second pass (a second tiny launch,
or an atomic add — chapter 5); it is not part of this puzzle. The checker compares every block's partial
sum against NumPy's, so each block must get its own segment exactly right.

**Example.** `n = 100`: two blocks, `out[0]` sums the products of elements 0..63, `out[1]` of 64..99.
In miniature, with 8 threads and `a*b = [3, 1, 4, 1, 5, 9, 2, 6]`:

```
shared s:      3    1    4    1    5    9    2    6     each thread stores its product
stride 4:      8   10    6    7                          t < 4:  s[t] += s[t + 4]
stride 2:     14   17                                    t < 2:  s[t] += s[t + 2]
stride 1:     31                                         t < 1:  s[t] += s[t + 1]
                                                         thread 0 writes out[j] = s[0] = 31
```
(a `cuda.syncthreads()` after the stores and after every step)

**What's new:** the *tree reduction* — log2({TPB}) = 6 steps instead of 63 additions in a row. Each step
halves the threads that work. Threads past `n` have no product: they must store 0, or the tree adds
garbage. Keep the working threads at the **front** of the array (`s[t] += s[t + stride]`): the
shared-memory banks then serve each step without conflicts (★★★). Spreading them out
(`s[2*stride*t] += ...`) gets the same numbers with bank conflicts.

**Launch:** `ceil(n / {TPB})` blocks of {TPB} threads; `n` is passed to the kernel; `out` has one slot per
block. Each thread may read `a` once and `b` once and write at most once; the kernel must use shared
memory; no atomics.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, b: np.ndarray, n: int) -> dict[str, np.ndarray]:
    prod = a.astype(np.float64) * b.astype(np.float64)
    partial = [prod[s:s + TPB].sum() for s in range(0, n, TPB)]
    return {"out": np.array(partial, dtype=np.float32)}


def _case(name: str, a: np.ndarray, b: np.ndarray, note: str = "") -> Case:
    a, b = a.astype(np.float32), b.astype(np.float32)
    n = a.size
    out = np.full(-(-n // TPB), np.nan, dtype=np.float32)
    step = LaunchStep("dot_kernel", grid=out.size, block=TPB, args=("out", "a", "b", "n"))
    return Case(name, {"out": out, "a": a, "b": b, "n": int(n)}, (step,), note)


def _nonzero(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values of magnitude 0.5..2 with random signs: every product is at least 0.25 away from zero, so a
    dropped or doubled term always shows."""
    return rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 10)
    n = size(rng, 257, 319)
    return (
        _case("random n=100", _nonzero(rng, 100), _nonzero(rng, 100), "the example from the description"),
        _case("random n=64", _nonzero(rng, 64), _nonzero(rng, 64), "exactly one block"),
        _case(f"random n={n}", _nonzero(rng, n), _nonzero(rng, n),
              f"five blocks, the last with {n - 256} elements"),
        _case("random n=65", _nonzero(rng, 65), _nonzero(rng, 65), "the second block has one element"),
        _case("integers n=200", rng.integers(1, 9, 200) * rng.choice([-1, 1], 200), rng.integers(1, 9, 200),
              "integer values: every partial sum is exact"),
        _case("n=1", np.array([1.5]), np.array([-2.0]), "one element, 63 threads that must contribute 0"),
    )


PUZZLE = Puzzle(
    slug="dot-product",
    number=10,
    title="Dot Product",
    chapter=2,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("dot_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        must_use_shared(),
        max_global_reads_per_thread(1, "a"),
        max_global_reads_per_thread(1, "b"),
        max_global_writes_per_thread(1),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced global loads and stores", (ideal_coalescing(),)),
        Star(3, "a conflict-free tree: no shared-memory bank conflicts", (no_bank_conflicts(),)),
    ),
    hints=(
        "First every thread puts `a[i] * b[i]` (or 0 when `i >= n`) into its slot of a shared array of TPB "
        "floats. Then the block adds the array up, and thread 0 writes the result.",
        "Add up in halving steps: `stride = TPB // 2`; while `stride > 0`: threads `t < stride` do "
        "`s[t] += s[t + stride]`; barrier; `stride //= 2`. The barrier must be reached by all threads.",
        "After the loop `s[0]` holds the block's sum: `if t == 0: out[cuda.blockIdx.x] = s[0]`.",
    ),
    reading=READING,
    # float32 sums of up to 64 products of size <= 4, added in any order; a wrong term moves a sum by >= 0.25
    rtol=1e-5,
    atol=1e-4,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """n elements, one partial sum per block of TPB, as in the test cases."""
    a, b = np.random.default_rng(8010).standard_normal((2, n), dtype=np.float32)
    return _case(f"bench n={n}", a, b)


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
