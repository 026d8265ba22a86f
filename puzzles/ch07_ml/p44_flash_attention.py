"""Puzzle 44 — FlashAttention: attention in one pass over key tiles, never writing the score table."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_atomics,
    shared_memory_budget,
)

D = 16                   # head dimension
BR = 32                  # query rows per block: one per thread
BC = 16                  # keys per tile
SK_MAX = 64              # the longest key sequence among the cases
SHARED_BUDGET = 4096     # bytes per block: a K tile and a V tile (2 KiB) fit; all of K and V (8 KiB) do not
ONE_PASS_READS = (SK_MAX // BC) * BC * D // BR   # 32: each block reads K (and V) once, split over 32 threads

READING = ("*FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness* (2022) — Dao et "
           "al., section 3.1 and Algorithm 1 (tiling and the online softmax)")

DESCRIPTION = f"""\
# Puzzle 44 — FlashAttention

The same function as puzzle 43 — `out = softmax(q k^T * scale) v` for one head, `D = {D}` — but without the
`Sq x Sk` score table. In puzzle 43 that table was written once and read twice; for a real sequence of
8K tokens it is 64M numbers per head, far too big for on-chip memory, and moving it dominates the cost.
FlashAttention streams the keys through shared memory in tiles and keeps, per query row, only:

    m    the largest score seen so far
    l    the sum of exp(score - m) over the keys seen so far
    acc  the sum of exp(score - m) * v[key] over the keys seen so far      ({D} floats)

When a new tile brings a larger maximum `m_new`, everything summed so far was relative to the old `m`:
multiply `l` and `acc` by `exp(m - m_new)` before adding the new tile's terms. At the end, `out = acc / l`.
This is the online softmax of puzzle 34, carried through a weighted sum.

**Example** (one query, scores arriving in two tiles, 1-D values, no scale):

```
tile 1: scores [1, 3],  v [10, 20]   m = 3, l = e^-2 + e^0 = 1.1353,  acc = 10e^-2 + 20 = 21.353
tile 2: scores [5, 0],  v [30, 40]   m_new = 5, rescale by e^(3-5) = 0.1353: l = 0.1537, acc = 2.890
                                     add e^0 + e^-5: l = 1.1604,  acc = 2.890 + 30 + 40e^-5 = 33.159
out = acc / l = 28.576   ( = softmax([1, 3, 5, 0]) . [10, 20, 30, 40] )
```

```
block b: threads t = 0..{BR - 1}, query row b*{BR} + t        shared: k_tile, v_tile ({BC} x {D} floats each)
for each tile of {BC} keys:
    all {BR} threads copy k[tile] and v[tile] into shared memory (coalesced), sync
    each thread: {BC} scores for its row -> m_new, rescale l and acc, add the tile
    sync (the next copy must not overwrite a tile someone is still reading)
out[row] = acc / l
```

**What's new:** tiling the *keys* with a running max/sum, so attention needs O(Sq) memory instead of
O(Sq x Sk) and reads K and V once per block of queries.

**Launch:** `ceil(Sq/{BR})` blocks of {BR} threads, thread `t` owns query row `blockIdx.x * {BR} + t`.
Sq and Sk are not always multiples of {BR} or {BC}; Sk is at most {SK_MAX}. Threads without a row still
help load tiles and reach every barrier; keys past `Sk` in the last tile must not count.
Rules: there is no buffer for scores (keep them in registers or a `cuda.local.array`); write each element
of `out` once; at most {SHARED_BUDGET} bytes of shared memory per block; read `k` and `v` through shared
tiles, at most {2 * ONE_PASS_READS} reads of each per thread (a second pass over the keys to find the
maximum first still fits). ★★: one pass — at most {ONE_PASS_READS} reads of `k` and of `v` per thread.

**Read more:** {READING}
"""


def spec(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, out: np.ndarray) -> dict[str, np.ndarray]:
    s = (q.astype(np.float64) @ k.astype(np.float64).T) * scale
    e = np.exp(s - s.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return {"out": (p @ v.astype(np.float64)).astype(np.float32)}


def _case(name: str, q: np.ndarray, k: np.ndarray, v: np.ndarray, note: str) -> Case:
    sq, sk = q.shape[0], k.shape[0]
    assert q.shape[1] == k.shape[1] == v.shape[1] == D and v.shape[0] == sk and sk <= SK_MAX
    buffers = {
        "q": np.asarray(q, dtype=np.float32),
        "k": np.asarray(k, dtype=np.float32),
        "v": np.asarray(v, dtype=np.float32),
        "out": np.full((sq, D), np.nan, dtype=np.float32),
        "scale": 1.0 / D ** 0.5,
    }
    step = LaunchStep("flash_attention", grid=(sq + BR - 1) // BR, block=BR,
                      args=("q", "k", "v", "out", "scale"))
    return Case(name, buffers, (step,), note)


def _random(rng: np.random.Generator, name: str, sq: int, sk: int, note: str) -> Case:
    q, k, v = rng.normal(0, 1.5, (sq, D)), rng.normal(0, 1.5, (sk, D)), rng.normal(0, 1, (sk, D))
    return _case(name, q, k, v, note)


def _rising(rng: np.random.Generator) -> Case:
    """Later keys score higher for every query: the running maximum changes in every tile."""
    sq, sk = 20, 64
    q = rng.normal(0, 1, (sq, D))
    q[:, 0] = rng.uniform(2, 4, sq)
    k = rng.normal(0, 1, (sk, D))
    k[:, 0] = np.linspace(-6, 6, sk) + rng.normal(0, 0.5, sk)
    return _case("rising scores Sq=20 Sk=64", q, k, rng.normal(0, 1, (sk, D)),
                 "scores grow from tile to tile: forgetting to rescale l and acc by exp(m_old - m_new) "
                 "cannot go unnoticed")


def _large_logits(rng: np.random.Generator) -> Case:
    sq, sk = 10, 40
    q = rng.normal(0, 1, (sq, D))
    k = rng.normal(0, 1, (sk, D))
    q[:, 0] = rng.uniform(8, 12, sq) * np.where(np.arange(sq) % 2 == 0, 1, -1)
    k[:, 0] = 60 + rng.normal(0, 0.3, sk)
    return _case("large logits Sq=10 Sk=40", q, k, rng.normal(0, 1, (sk, D)),
                 "scores near +150 and -150: the running maximum keeps exp in range")


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 44)
    sq, sk = size(rng, 33, 63), size(rng, 33, 63, not_multiple_of=16)
    return (
        _random(rng, "random Sq=64 Sk=64", 64, 64, "two full blocks of queries, four full key tiles"),
        _random(rng, f"random Sq={sq} Sk={sk}", sq, sk,
                f"a partial query block ({sq - 32} of 32 rows) and a last key tile with {sk % 16} of 16 keys"),
        _rising(rng),
        _random(rng, "one query, one key", 1, 1, "one row, one key, 31 idle threads that still load tiles"),
        _random(rng, "decode: Sq=1 Sk=50", 1, 50, "a single query against 50 keys"),
        _large_logits(rng),
    )


PUZZLE = Puzzle(
    slug="flash-attention",
    number=44,
    title="FlashAttention",
    chapter=7,
    difficulty=5,
    description=DESCRIPTION,
    kernels=("flash_attention",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        must_use_shared(),
        shared_memory_budget(SHARED_BUDGET),
        max_global_writes_per_thread(D, "out"),
        max_global_reads_per_thread(D, "q"),
        max_global_reads_per_thread(2 * ONE_PASS_READS, "k"),
        max_global_reads_per_thread(2 * ONE_PASS_READS, "v"),
        no_atomics(),
    ),
    stars=(
        Star(2, f"one pass over the keys (online softmax): at most {ONE_PASS_READS} reads of k and of v per "
                "thread", (max_global_reads_per_thread(ONE_PASS_READS, "k"),
                           max_global_reads_per_thread(ONE_PASS_READS, "v"))),
    ),
    hints=(
        "Per thread: `q_row` and `acc` as `cuda.local.array(D, numba.float32)` (q_row pre-multiplied by "
        "scale), `m = -inf`, `l = 0`. Loop `for k0 in range(0, Sk, BC)`; every thread runs every iteration, "
        "row or no row, because of the barriers inside.",
        "Loading a tile: element e = t, t + 32, ... of the BC*D tile is `k[k0 + e // D, e % D]` (skip it "
        "past Sk) — consecutive e are consecutive addresses. Barrier, compute, barrier.",
        "Compute, for a thread with a row: the tile's scores into a local array of BC, "
        "`m_new = max(m, scores)`, `corr = math.exp(m - m_new)`, `l *= corr`, `acc[c] *= corr`, then for "
        "each valid key `p = math.exp(s - m_new)`, `l += p`, `acc[c] += p * v_tile[j, c]`; `m = m_new`. "
        "After the loop `out[row, c] = acc[c] / l`.",
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
    return _random(np.random.default_rng(8044), f"bench Sq={sq} Sk={SK_MAX}", sq, SK_MAX, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
