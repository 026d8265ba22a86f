"""Puzzle 11 — 1-D convolution: a shared tile plus a halo borrowed from the next block's range."""

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
    shared_memory_budget,
)

TPB = 16          # threads per block = outputs per block
MAX_K = 4         # the longest kernel w of any test case
SHARED_BUDGET = 128   # bytes: 32 float32 slots, enough for a tile, its halo and the weights

READING = ("GPU MODE lectures — lecture 4, *Intro to Compute and Memory Architecture* (Thomas Viehmann): "
           "tiling, i.e. loading a tile into shared memory once and reusing it")

DESCRIPTION = f"""\
# Puzzle 11 — 1-D convolution

Slide a short weight vector `w` of length `k` (`1 <= k <= {MAX_K}`) along `a`; past the end, `a` counts as 0:

    out[i] = a[i]*w[0] + a[i+1]*w[1] + ... + a[i+k-1]*w[k-1]

(This is what deep-learning libraries call a convolution; mathematicians would call it a correlation,
since `w` is not flipped.)

**Example.** `a = [1, 2, 3, 4, 5]`, `w = [1, 0, -1]` gives `out = [-2, -2, -2, 4, 5]`
(`out[0] = 1 - 3`, `out[3] = 4*1 + 5*0 + 0*(-1)`, `out[4] = 5`).

Each block computes {TPB} outputs, and needs {TPB} + k - 1 inputs: its own {TPB} plus a *halo* of k - 1
elements that belong to the next block's range.

```
block 0, k = 4:   outputs 0..15 need a[0] .. a[18]
shared tile:  [ a0  a1  a2  ...  a15 | a16  a17  a18 ]
                loaded by t0 .. t15  |  halo: loaded by t0, t1, t2 (their second read)
thread 15:                       a15 + a16 + a17 + a18   (times w[0..3])
```

**What's new:** a *halo*. A tile's threads need a little more data than they own. Let a few threads load
a second element; every global value still comes in once per block. The weights are reused by every
thread too: stage them in shared memory as well.

**Launch:** `ceil(n / {TPB})` blocks of {TPB} threads; `n` and `k` are passed to the kernel. Per thread:
at most 2 reads of `a` (own element + one halo element), 1 read of `w`, 1 write; the kernel must use
shared memory, at most {SHARED_BUDGET} bytes per block. Size the shared arrays with module constants
(the starter has `TILE_LEN = TPB + MAX_K - 1`): a shape must be a constant when the kernel compiles, and
numba-cuda rejects an expression such as `TPB + MAX_K - 1` written inside the kernel.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, w: np.ndarray, n: int, k: int) -> dict[str, np.ndarray]:
    padded = np.concatenate([a.astype(np.float64), np.zeros(k, np.float64)])
    result = sum(padded[j:j + n] * np.float64(w[j]) for j in range(k))
    return {"out": np.asarray(result, dtype=np.float32)}


def _case(name: str, a: np.ndarray, w: np.ndarray, note: str = "") -> Case:
    a, w = a.astype(np.float32), w.astype(np.float32)
    n, k = a.size, w.size
    assert 1 <= k <= MAX_K
    out = np.full(n, np.nan, dtype=np.float32)
    step = LaunchStep("conv_kernel", grid=-(-n // TPB), block=TPB, args=("out", "a", "w", "n", "k"))
    return Case(name, {"out": out, "a": a, "w": w, "n": int(n), "k": int(k)}, (step,), note)


def _nonzero(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values of magnitude 0.5..2 with random signs: a dropped or doubled term always shows."""
    return rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 11)
    n = size(rng, 49, 63)
    return (
        _case("worked example n=5 k=3", np.array([1, 2, 3, 4, 5]), np.array([1, 0, -1]),
              "the example from the description"),
        _case(f"random n={n} k=4", _nonzero(rng, n), _nonzero(rng, 4),
              "four blocks; every block but the last needs a full halo from its neighbour"),
        _case("random n=64 k=3", _nonzero(rng, 64), _nonzero(rng, 3),
              "blocks fit exactly; the last halo is past the end"),
        _case("random n=33 k=2", _nonzero(rng, 33), _nonzero(rng, 2), "the third block has one output"),
        _case("random n=16 k=4", _nonzero(rng, 16), _nonzero(rng, 4), "one block; its whole halo is padding"),
        _case("n=2 k=4", np.array([1.5, -2.0]), np.array([2.0, -1.0, 0.5, 3.0]), "shorter than the weights"),
        _case("n=1 k=1", np.array([-1.25]), np.array([4.0]), "one element, one weight: no halo at all"),
    )


PUZZLE = Puzzle(
    slug="conv-1d",
    number=11,
    title="1-D Convolution",
    chapter=2,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("conv_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        must_use_shared(),
        max_global_reads_per_thread(2, "a"),
        max_global_reads_per_thread(1, "w"),
        max_global_writes_per_thread(1, "out"),
        shared_memory_budget(SHARED_BUDGET),
    ),
    stars=(
        Star(2, "coalesced global loads and stores", (ideal_coalescing(),)),
        Star(3, "no shared-memory bank conflicts", (no_bank_conflicts(),)),
    ),
    hints=(
        "Two shared arrays: a tile of `TILE_LEN = TPB + MAX_K - 1` inputs and `MAX_K` weights. Fill them, "
        "barrier, then compute only from shared memory.",
        "Thread `t` of block `b` loads `tile[t] = a[b*TPB + t]`; threads `t < MAX_K - 1` also load "
        "`tile[TPB + t] = a[b*TPB + TPB + t]`; threads `t < k` load `ws[t] = w[t]`. Past `n`, store 0.",
        "After `cuda.syncthreads()`: `acc = 0.0; for j in range(k): acc += tile[t + j] * ws[j]`, then "
        "`if b*TPB + t < n: out[b*TPB + t] = acc`.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-5,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """n outputs with the longest kernel, k = MAX_K."""
    rng = np.random.default_rng(8011)
    a, w = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(MAX_K, dtype=np.float32)
    return _case(f"bench n={n} k={MAX_K}", a, w)


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
