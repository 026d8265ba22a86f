"""Puzzle 23 — Warp stream compaction: keep the positive values, packed in order, with ballot and popc."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    no_atomics,
    no_shared,
)

TPB = 128
WARP = 32
SENTINEL = -999_999      # never a kept value (those are positive): marks slots nobody may write

READING = ("*Parallel Prefix Sum (Scan) with CUDA* — GPU Gems 3, ch. 39 (Harris, Sengupta, Owens), "
           "section 39.3.1, *Stream Compaction*")

DESCRIPTION = f"""\
# Puzzle 23 — Stream compaction in a warp

Each warp keeps only its **positive** values and packs them, in their original order, at the start of its
own 32-slot segment of `out`; it also writes how many it kept to `count[w]`. Slots after the kept values
must stay untouched (they hold {SENTINEL}).

**Example** (warp 0, showing its first 8 lanes; zero is not positive):

```
lane      0   1   2   3   4   5   6   7
a         5  -2   0   7  -1   3   9  -4
keep      1   0   0   1   0   1   1   0      ballot = 0b...01101001 (bit l = lane l keeps)
rank      0   .   .   1   .   2   3   .      rank = kept lanes below me = popc(ballot & lanemask_lt())
out       5   7   3   9  {SENTINEL} ...                   count[0] = popc(ballot) = 4
```

Three warp intrinsics do it without memory or loops:
- `cuda.ballot_sync(mask, pred)` — every lane gets a 32-bit word whose bit `l` is lane `l`'s `pred`.
- `cuda.lanemask_lt()` — a word with the bits of all lanes *below* me set (lane 3: `0b0111`).
- `cuda.popc(x)` — the number of set bits.

So a kept lane's slot is `32*w + popc(ballot & lanemask_lt())`: one instruction instead of a prefix sum.
This is how filtering runs on a GPU — dropping padding tokens from a batch, keeping the candidates that
pass a threshold; a compaction of the whole array then adds the per-warp counts with a scan (chapter 6).

**What's new:** warp votes: `ballot_sync` turns 32 predicates into one word every lane can read, and bit
counting turns it into positions. Stable (order-preserving) compaction without atomics.

**Launch:** blocks of {TPB} threads, `ceil(n / {TPB})` blocks; `a`, `out` (length `n`) and `count` (length
`ceil(n / 32)`) are int32. Warp `w` owns `out[32*w .. 32*w + 31]` (the last one may be shorter). Each thread
reads `a` once; no atomics (they would not keep the order).

**Read more:** {READING}
"""


def spec(a: np.ndarray, out: np.ndarray, count: np.ndarray, n: int) -> dict[str, np.ndarray]:
    packed = np.full(n, SENTINEL, np.int32)
    counts = np.zeros(-(-n // WARP), np.int32)
    for w, s in enumerate(range(0, n, WARP)):
        kept = a[s:s + WARP][a[s:s + WARP] > 0]
        packed[s:s + kept.size] = kept
        counts[w] = kept.size
    return {"out": packed, "count": counts}


def _case(name: str, a, note: str) -> Case:
    a = np.asarray(a, dtype=np.int32)
    n = a.size
    buffers = {"a": a, "out": np.full(n, SENTINEL, np.int32),
               "count": np.full(-(-n // WARP), SENTINEL, np.int32), "n": n}
    step = LaunchStep("compact", grid=-(-n // TPB), block=TPB, args=("a", "out", "count", "n"))
    return Case(name, buffers, (step,), note)


def _mixed(rng: np.random.Generator, n: int) -> np.ndarray:
    """Distinct magnitudes (so order mistakes show), random signs, and some zeros (not positive)."""
    v = rng.permutation(np.arange(1, n + 1)) * rng.choice([-1, 1], n)
    v[rng.random(n) < 0.1] = 0
    return v


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 23)
    all_neg = -np.arange(1, 33)
    n = size(rng, 65, 95)
    return (
        _case("worked example n=8", [5, -2, 0, 7, -1, 3, 9, -4], "the example from the description"),
        _case("n=1 positive", [6], "one lane keeps its value"),
        _case("n=1 zero", [0], "zero is not positive: count 0, out untouched"),
        _case("mixed warps n=96", np.concatenate([all_neg, np.arange(1, 33), _mixed(rng, 32)]),
              "warp 0 keeps nothing, warp 1 keeps everything, warp 2 a mix"),
        _case(f"random n={n}", _mixed(rng, n), f"the last warp has {n - 64} lanes"),
        _case("random n=1000", _mixed(rng, 1000), "8 blocks, the last warp has 8 lanes"),
    )




PUZZLE = Puzzle(
    slug="stream-compaction",
    number=23,
    title="Stream compaction in a warp",
    chapter=4,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("compact",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out", "count"),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_writes_per_thread(1, "out"),
        max_global_writes_per_thread(1, "count"),
        no_atomics(),
    ),
    stars=(
        Star(2, "votes, not memory: no shared memory", (no_shared('warp votes need none'),)),
        Star(3, "coalesced: the kept values of a warp are stored side by side", (ideal_coalescing(),)),
    ),
    hints=(
        "Every lane reads its value (`v = a[i]` if `i < n`, else 0) and computes `keep = v > 0`; then all "
        "32 lanes call `cuda.ballot_sync(0xffffffff, keep)`.",
        "A kept lane's position within its warp is the number of kept lanes below it: "
        "`cuda.popc(ballot & cuda.lanemask_lt())`. Lane 0 writes `count[i // 32] = cuda.popc(ballot)` when "
        "its warp has elements (`i < n`).",
        "`base = i - cuda.laneid` is the warp's first slot; `if keep: out[base + rank] = v`.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """n elements, about half of them kept."""
    a = np.random.default_rng(8023).integers(-1000, 1001, n, dtype=np.int32)
    return _case(f"bench n={n}", a, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
