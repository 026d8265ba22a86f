"""Puzzle 74 — Flash-decoding: one query per sequence against a long KV cache, the keys split over many
blocks, then the partial softmaxes merged by a second kernel."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    max_launches,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
)

D = 32                   # head dimension
CHUNK = 64               # keys per split = threads per block of the split kernel
L_MAX = 1024             # the longest cache among the cases
SPLITS = L_MAX // CHUNK  # blocks per sequence in the split kernel
TILE_READS = CHUNK * D // CHUNK    # 32: one chunk of k (and of v) shared by the block's threads

READING = ("*FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness* (2022) — Dao et "
           "al., section 3.1 (the softmax of blocks, merged by rescaling); the Flash-Decoding note "
           "(Dao, Haziza, Massa, Sizov, 2023) applies it to decoding")

DESCRIPTION = f"""\
# Puzzle 74 — Flash-decoding

At a decode step each sequence has **one** new query and a long cache of keys and values. Puzzle 44 gave a
block a tile of queries and walked it over the keys; here there is one query, so "one block per sequence"
means a handful of blocks for the whole GPU — each walking thousands of keys while most of the chip idles.
Flash-decoding splits the *keys* instead: block `(s, r)` handles keys `s*{CHUNK} .. s*{CHUNK}+{CHUNK - 1}` of row
`r`, and a second kernel merges the pieces.

A piece of the softmax is three numbers per chunk — its maximum score `m`, its sum `l = sum exp(s - m)`,
and its unnormalised output `acc = sum exp(s - m) * v` ({D} floats). Two pieces merge exactly:

    M = max(m1, m2),   l = l1*exp(m1 - M) + l2*exp(m2 - M),   acc = acc1*exp(m1 - M) + acc2*exp(m2 - M)

and at the end `out = acc / l`. It is puzzle 44's online rescaling, done in a tree instead of a loop.

**Example** (1-D values, no scale; keys split in two chunks):

```
chunk 0: scores [1, 3], v [10, 20]  ->  m = 3, l = e^-2 + 1 = 1.1353,  acc = 10e^-2 + 20 = 21.353
chunk 1: scores [5, 0], v [30, 40]  ->  m = 5, l = 1 + e^-5 = 1.0067,  acc = 30 + 40e^-5 = 30.270
merge:   M = 5, l = 1.1353e^-2 + 1.0067 = 1.1604,  acc = 21.353e^-2 + 30.270 = 33.159
out = 33.159 / 1.1604 = 28.576          ( = softmax([1, 3, 5, 0]) . [10, 20, 30, 40] )
```

```
row r, lens[r] = 150:   keys 0..63 | 64..127 | 128..149       blocks (0,r) (1,r) (2,r); (3..{SPLITS - 1}, r) have
                          block 0     block 1    block 2       no keys and write nothing
launch 1  decode_split:   each block -> m_part[r, s], l_part[r, s], acc_part[r, s, :]
launch 2  decode_combine: block r, thread c: merge the ceil(150/{CHUNK}) = 3 pieces -> out[r, c]
```

Inputs: `q` `(R, {D})`, `k_cache` and `v_cache` `(R, {L_MAX}, {D})` with row `r`'s `lens[r]` keys first (the
rest is NaN: never read it), `scale`. Compute `out[r] = softmax(scale * k[r, :n] . q[r]) . v[r, :n]`. The
scratch buffers `m_part`, `l_part` `(R, {SPLITS})` and `acc_part` `(R, {SPLITS}, {D})` start as NaN.

**What's new:** parallelism across the reduction dimension — partial results that are merged
*associatively* in a second launch (a split-K reduction).

**Launch:** `decode_split` on a grid of `({SPLITS}, R)` blocks of {CHUNK} threads (`blockIdx.x` = the split,
`blockIdx.y` = the row), then `decode_combine` on `R` blocks of {D} threads (thread `c` = channel). A block of
the first kernel may read only its chunk: at most {TILE_READS} reads of `k_cache` and of `v_cache` per thread,
through shared memory (thread `t` scores key `t` of the chunk; lanes share the loading). Rows have 1 to
{L_MAX} keys; the last chunk of a row is usually partial. ★★: every load and store coalesced. ★★★: no
shared-memory bank conflicts (a `{CHUNK} x {D}` tile read by rows of threads needs one column of padding).

**Read more:** {READING}
"""


def spec(q: np.ndarray, k_cache: np.ndarray, v_cache: np.ndarray, lens: np.ndarray, scale: float,
         m_part: np.ndarray, l_part: np.ndarray, acc_part: np.ndarray, out: np.ndarray) -> dict[str, np.ndarray]:
    result = np.empty(out.shape, dtype=np.float64)
    for r, n in enumerate(lens):
        s = k_cache[r, :n].astype(np.float64) @ q[r].astype(np.float64) * scale
        e = np.exp(s - s.max())
        result[r] = (e / e.sum()) @ v_cache[r, :n].astype(np.float64)
    return {"out": result.astype(np.float32)}


def _steps(rows: int, splits: int) -> tuple[LaunchStep, ...]:
    return (
        LaunchStep("decode_split", grid=(splits, rows), block=CHUNK,
                   args=("q", "k_cache", "v_cache", "lens", "scale", "m_part", "l_part", "acc_part")),
        LaunchStep("decode_combine", grid=rows, block=D, args=("lens", "m_part", "l_part", "acc_part", "out")),
    )


def _case(name: str, rng: np.random.Generator, lens: list[int], note: str, q_scale: float = 1.0,
          rising: bool = False, l_max: int = L_MAX, lead: float = 0.0) -> Case:
    rows = len(lens)
    splits = l_max // CHUNK
    k = np.full((rows, l_max, D), np.nan, dtype=np.float32)
    v = np.full((rows, l_max, D), np.nan, dtype=np.float32)
    q = rng.normal(0, 1, (rows, D)) * q_scale
    for r, n in enumerate(lens):
        keys = rng.normal(0, 1, (n, D))
        if rising:   # later chunks score higher: each chunk's maximum is above the one before
            keys += np.linspace(-3, 3, n)[:, None] * np.sign(q[r])[None, :] / np.sqrt(D) * 4
        if lead and n > 1:
            keys = _lead(keys, q[r].astype(np.float32).astype(np.float64), lead)
        k[r, :n] = keys
        v[r, :n] = rng.normal(0, 1, (n, D))
    buffers = {
        "q": q.astype(np.float32), "k_cache": k, "v_cache": v, "lens": np.asarray(lens, dtype=np.int32),
        "scale": np.float32(1.0 / np.sqrt(D)),
        "m_part": np.full((rows, splits), np.nan, np.float32),
        "l_part": np.full((rows, splits), np.nan, np.float32),
        "acc_part": np.full((rows, splits, D), np.nan, np.float32),
        "out": np.full((rows, D), np.nan, np.float32),
    }
    return Case(name, buffers, _steps(rows, splits), note)


def _lead(keys: np.ndarray, q: np.ndarray, lead: float) -> np.ndarray:
    """``keys`` with the best-scoring one moved along ``q`` until its score leads the next by ``lead``.

    With scores in the hundreds, float32's rounding of a score is about |s| * sqrt(D) * 2^-24 (1e-4 here).
    Where the two best scores nearly tie, both weigh about a half and that error moves the output by up to
    |v1 - v2| * 1e-4, past the tolerance (1e-5): a correct float32 kernel would fail. A lead of 8 makes every
    other key's weight at most e^-8 (3e-4), and the error a few 1e-8."""
    keys = keys.astype(np.float32).astype(np.float64)
    scale = 1.0 / np.sqrt(D)
    s = keys @ q * scale
    order = np.argsort(s)
    gap = s[order[-1]] - s[order[-2]]
    if gap < lead:
        keys[order[-1]] += (lead - gap) / (scale * (q @ q)) * q
    return keys


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(74) if rng is None else rng
    ragged = [int(rng.integers(2, L_MAX)) for _ in range(3)]
    return (
        _case("ragged rows", rng, [L_MAX, 150, 1, CHUNK, *ragged], "a full cache, a partial last chunk, one "
              f"key, exactly one chunk, and {len(ragged)} random lengths: blocks past a row's end have no keys"),
        _case("rising scores", rng, [700, 513], "each chunk's maximum is larger than the previous one's: a merge "
              "that forgets to rescale by exp(m - M) is far off", rising=True),
        _case("large logits", rng, [300, 257, 66], "queries scaled so scores reach the hundreds: "
              "exp needs the maximum subtracted, in the chunks and in the merge (each row's best score leads "
              "the next by at least 8, so float32's rounding of such scores stays within the tolerance)",
              q_scale=40.0, lead=8.0),
        _case("one row, one chunk", rng, [37], "a single block does all the work; 15 blocks have none"),
        _spike_case(rng),
    )


SPIKE_LEAD = 120.0      # above log(float32 max) = 88.7: exp of the lead overflows


def _spike_case(rng: np.random.Generator) -> Case:
    """One row whose best key sits at the last thread of a chunk and leads every other key by SPIKE_LEAD.

    The chunk maximum is only the softmax's shift, so a maximum tree that skips threads (a stride of
    CHUNK // 3, a loop that stops at stride 1) gives the same output as long as exp(s - m) stays finite. Here
    the key it skips scores SPIKE_LEAD above the rest: exp of that overflows float32 and the output is NaN.
    A correct kernel's output is that key's value row (every other key weighs at most e^-120)."""
    n = 3 * CHUNK - int(rng.integers(0, CHUNK // 2))
    at = 2 * CHUNK - 1                  # thread CHUNK - 1 of chunk 1
    case = _case("a spike at a chunk's last thread", rng, [n], f"key {at} scores {SPIKE_LEAD:g} above every other: "
                 "a chunk maximum that misses a thread overflows exp")
    b = case.buffers
    q = b["q"][0].astype(np.float64)
    keys = b["k_cache"][0, :n].astype(np.float64)
    s = keys @ q * float(b["scale"])
    others = np.delete(s, at).max()
    keys[at] += (others + SPIKE_LEAD - s[at]) / (float(b["scale"]) * (q @ q)) * q
    b["k_cache"][0, at] = keys[at].astype(np.float32)
    return case


def bench(n: int) -> Case:
    """About n key elements (rows x length x D): 8192-key caches, as many rows as n allows."""
    length = 8192
    rows = max(1, n // (length * D))
    rng = np.random.default_rng(74)
    return _case(f"bench {rows} rows x {length}", rng, [length] * rows, "graduate-mode timing", l_max=length)


PUZZLE = Puzzle(
    slug="flash-decoding",
    number=74,
    title="Flash-decoding",
    chapter=11,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("decode_split", "decode_combine"),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    scratch=("m_part", "l_part", "acc_part"),   # written by the kernels, not judged
    constraints=(
        must_use_shared(),
        max_global_reads_per_thread(TILE_READS, "k_cache"),
        max_global_reads_per_thread(TILE_READS, "v_cache"),
        max_global_writes_per_thread(1, "out"),
        max_global_writes_per_thread(1, "acc_part"),
        max_launches(2),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced global loads and stores", (ideal_coalescing(),)),
        Star(3, "no shared-memory bank conflicts", (no_bank_conflicts(),)),
    ),
    hints=(
        f"Split kernel: `r = blockIdx.y`, `start = blockIdx.x * {CHUNK}`, `n = lens[r]`; if `start >= n` the "
        "whole block returns (before any barrier). Load the chunk's keys and values into shared tiles: "
        f"element `e = t, t + {CHUNK}, ...` of the {CHUNK}x{D} tile is row `e // {D}`, column `e % {D}`.",
        f"Thread t scores key `start + t` (-inf past n), then the block's max `m` and sum `l` of "
        f"`exp(s - m)` by tree reductions in shared memory; threads `c < {D}` add up "
        f"`p[j] * v_tile[j, c]`. Pad the key tile to {D + 1} columns: row t, column c is then in bank "
        "(t + c) % 32.",
        "Combine kernel, thread c: `ns = (n + CHUNK - 1) // CHUNK`; `M = max(m_part[r, :ns])`; "
        "`w = exp(m_part[r, s] - M)`; `l += l_part[r, s] * w`; `acc += acc_part[r, s, c] * w`; "
        "`out[r, c] = acc / l`.",
    ),
    reading=READING,
    rtol=1e-4,
    atol=1e-5,
    bench=bench,
)
