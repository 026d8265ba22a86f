"""Puzzle 43 — Attention: scores, row softmax, weighted sum of values, in three launches."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import max_global_reads_per_thread, max_global_writes_per_thread, no_atomics

D = 16                   # head dimension
TILE = 16                # the score and output kernels use blocks of (TILE, TILE) threads
SOFTMAX_TPB = 64         # the softmax kernel: one block per query row, one thread per key
SK_MAX = SOFTMAX_TPB     # so a row of scores has at most 64 keys

READING = ("*FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness* (2022) — Dao et "
           "al., section 2.2 (standard attention and its memory traffic)")

DESCRIPTION = f"""\
# Puzzle 43 — Attention

One attention head: each query row of `q` (Sq x {D}) scores every key row of `k` (Sk x {D}), turns the
scores into weights with a softmax, and averages the rows of `v` (Sk x {D}) with those weights:

    scores = (q @ k^T) * scale                 Sq x Sk      (scale = 1 / sqrt({D}) = 0.25)
    probs  = softmax of each row of scores     Sq x Sk
    out    = probs @ v                         Sq x {D}

**Example** (D = 2 for the picture, scale = 1): `q = [[1, 0]]`, `k = [[2, 0], [0, 1], [1, 1]]`,
`v = [[1, 0], [0, 1], [3, 3]]`:

```
scores = [2, 0, 1]
probs  = exp([2, 0, 1] - 2) / sum = [1, 0.1353, 0.3679] / 1.5032 = [0.6652, 0.0900, 0.2447]
out    = 0.6652*[1, 0] + 0.0900*[0, 1] + 0.2447*[3, 3] = [1.3994, 0.8242]
```

Here you may write the whole `Sq x Sk` table to memory — that table is exactly what makes attention
expensive for long sequences, and what puzzle 44 gets rid of. Three kernels, run one after the other:

```
attn_scores   q, k -> scores   grid (ceil(Sk/{TILE}), ceil(Sq/{TILE})), block ({TILE},{TILE}), thread x=j y=i
attn_softmax  scores -> probs  grid Sq, block {SOFTMAX_TPB}: block i owns row i, thread j owns key j
attn_pv       probs, v -> out  grid (1, ceil(Sq/{TILE})), block ({TILE},{TILE}), thread x=c y=i
```

**The softmax must be stable.** `exp` overflows float32 above about 88, so subtract the row's maximum
before exponentiating (`exp(s - max)` is at most 1; the result is the same). One case has scores in the
hundreds, positive in some rows and negative in others: without the subtraction you get `inf / inf` or
`0 / 0`, both NaN.

**What's new:** chaining kernels through scratch buffers (`scores` and `probs` are checked too, so a
mistake is caught at the stage that made it), and a block-wide max and sum in one kernel: two tree
reductions sharing one shared array — with a barrier before the second one overwrites what the first
left (every thread must have read the maximum first).

**Launch:** as above; Sq and Sk are mostly not multiples of {TILE}, Sk is at most {SK_MAX}; threads past
the edges must not write. Each thread writes each output at most once. ★★: the softmax keeps its score in
a register — one read of `scores` per thread, not one per pass.

**Read more:** {READING}
"""


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def spec(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, scores: np.ndarray, probs: np.ndarray,
         out: np.ndarray) -> dict[str, np.ndarray]:
    s = (q.astype(np.float64) @ k.astype(np.float64).T) * scale
    p = _softmax(s)
    return {
        "scores": s.astype(np.float32),
        "probs": p.astype(np.float32),
        "out": (p @ v.astype(np.float64)).astype(np.float32),
    }


def _case(name: str, q: np.ndarray, k: np.ndarray, v: np.ndarray, note: str) -> Case:
    sq, sk = q.shape[0], k.shape[0]
    assert q.shape[1] == k.shape[1] == v.shape[1] == D and v.shape[0] == sk and sk <= SK_MAX
    buffers = {
        "q": np.asarray(q, dtype=np.float32),
        "k": np.asarray(k, dtype=np.float32),
        "v": np.asarray(v, dtype=np.float32),
        "scale": 1.0 / D ** 0.5,
        "scores": np.full((sq, sk), np.nan, dtype=np.float32),
        "probs": np.full((sq, sk), np.nan, dtype=np.float32),
        "out": np.full((sq, D), np.nan, dtype=np.float32),
    }
    steps = (
        LaunchStep("attn_scores", grid=((sk + TILE - 1) // TILE, (sq + TILE - 1) // TILE), block=(TILE, TILE),
                   args=("q", "k", "scores", "scale")),
        LaunchStep("attn_softmax", grid=sq, block=SOFTMAX_TPB, args=("scores", "probs")),
        LaunchStep("attn_pv", grid=(1, (sq + TILE - 1) // TILE), block=(TILE, TILE),
                   args=("probs", "v", "out")),
    )
    return Case(name, buffers, steps, note)


def _random(rng: np.random.Generator, name: str, sq: int, sk: int, note: str) -> Case:
    q, k, v = rng.normal(0, 1.5, (sq, D)), rng.normal(0, 1.5, (sk, D)), rng.normal(0, 1, (sk, D))
    return _case(name, q, k, v, note)


def _large_logits(rng: np.random.Generator) -> Case:
    """Scores around +-150 with spreads of a few units: a stable softmax is smooth, a naive one is NaN."""
    sq, sk = 8, 24
    q = rng.normal(0, 1, (sq, D))
    k = rng.normal(0, 1, (sk, D))
    q[:, 0] = rng.uniform(8, 12, sq) * np.where(np.arange(sq) % 2 == 0, 1, -1)   # even rows +, odd rows -
    k[:, 0] = 60 + rng.normal(0, 0.3, sk)
    return _case("large logits Sq=8 Sk=24", q, k, rng.normal(0, 1, (sk, D)),
                 "scores near +150 in even rows and -150 in odd rows: exp overflows or underflows unless the "
                 "row maximum is subtracted first")


def _spiked(rng: np.random.Generator) -> Case:
    """Query i points along axis i, and one key (63, 1, 41, 2 for queries 0-3) along the same axis, scored
    about 120 against its query; every other score stays within a few units of 0."""
    sq, sk, at = 4, SK_MAX, (63, 1, 41, 2)
    q, k = rng.normal(0, 0.1, (sq, D)), rng.normal(0, 1, (sk, D))
    for i, j in enumerate(at):
        q[i, i] += 11.0
        k[j] = rng.normal(0, 0.1, D)
        k[j, i] = 44.0
    return _case(f"one spike per row Sq=4 Sk={sk}", q, k, rng.normal(0, 1, (sk, D)),
                 "each query scores one key (63, 1, 41, 2) about 120 above the rest: a max tree that skips any "
                 "thread's value subtracts too small a max, and exp overflows")


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 43)
    sq, sk = size(rng, 17, 31), size(rng, 33, 47, not_multiple_of=16)
    return (
        _random(rng, f"random Sq={sq} Sk={sk}", sq, sk, "neither size is a multiple of 16; Sq != Sk catches a "
                "transposed index"),
        _random(rng, "random Sq=33 Sk=64", 33, 64, "a full softmax block of 64 keys"),
        _random(rng, "one query, one key", 1, 1, "the only weight is 1, so out equals the single row of v"),
        _random(rng, "one query Sq=1 Sk=9", 1, 9, "a decode step: one query row"),
        _large_logits(rng),
        _spiked(rng),
    )


PUZZLE = Puzzle(
    slug="attention",
    number=43,
    title="Attention",
    chapter=7,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("attn_scores", "attn_softmax", "attn_pv"),
    spec=spec,
    make_cases=make_cases,
    outputs=("scores", "probs", "out"),
    constraints=(
        max_global_writes_per_thread(1, "scores"),
        max_global_writes_per_thread(1, "probs"),
        max_global_writes_per_thread(1, "out"),
        no_atomics(),
    ),
    stars=(
        Star(2, "the softmax reads each score once and keeps it in a register",
             (max_global_reads_per_thread(1, "scores"),)),
    ),
    hints=(
        "attn_scores and attn_pv are small matmuls: one thread per output element, a loop of length D (or "
        "Sk), guarded by `if i < Sq and j < Sk`. attn_softmax is the interesting one: thread j reads "
        "`scores[i, j]` (or -inf when j >= Sk, so it never wins the max).",
        "In attn_softmax: put the score in `red[j]` (a shared array of 64), tree-reduce with `max` from "
        "stride 32 to 1 (barrier after each step), read `m = red[0]`, **barrier**, then put "
        "`e = exp(s - m)` (0 for j >= Sk) in `red[j]` and tree-reduce with `+`.",
        "Finish with `probs[i, j] = e / red[0]` for j < Sk. Use float32 throughout: "
        "`numba.float32(-math.inf)`, `math.exp` of a float32 is a float32.",
    ),
    reading=READING,
    rtol=1e-4,
    atol=5e-5,   # float32 softmax-weighted sums of up to 64 values; fresh random cases each check
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n multiply-adds per product (Sq x Sk x D): Sk = SK_MAX keys, Sq = n / (SK_MAX * D) queries."""
    sq = max(1, n // (SK_MAX * D))
    return _random(np.random.default_rng(8043), f"bench Sq={sq} Sk={SK_MAX}", sq, SK_MAX, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
