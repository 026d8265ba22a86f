"""Puzzle 70 — Ring attention: each device keeps its queries, the key/value blocks travel around the ring,
and an online softmax merges one block per round."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, Devices, LaunchStep, Puzzle, Star, Sync
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_atomics,
)

from .layout import at, budget
from .rules import no_peer_stores, within_link_budget

D = 16                           # head dimension
R_MAX = 16                       # rows (queries, keys) per device: one block of (R_MAX, R_MAX) threads

READING = ("*Ring Attention with Blockwise Transformers for Near-Infinite Context* (2023) — Liu, Zaharia, "
           "Abbeel; *FlashAttention* (2022) — Dao et al., section 3.1 (the online softmax); *The Ultra-Scale "
           "Playbook* — Hugging Face, section \"Context Parallelism\"")

DESCRIPTION = f"""\
# Puzzle 70 — Ring attention

A sequence too long for one GPU's memory is split into `N` blocks of `R` tokens: device `d` holds the
queries, keys and values of tokens `d*R .. d*R + R - 1`. Every query must still attend to **every** key.
Ring attention keeps the queries where they are and sends the key/value blocks round the ring: in round
`s` device `d` attends to the block of device `(d - s) mod N` while it passes that block on to its right
neighbour. After `N` rounds every query has seen every key, and no device ever held more than two blocks.

Attending to one block at a time is FlashAttention's online softmax (puzzle 44): per query row keep the
running maximum `m`, the running sum `l = sum exp(s - m)` and the unnormalised output `acc = sum exp(s - m)
v`; a new block with scores `s_j` updates them as

    M = max(m, max_j s_j),  l = l*exp(m - M) + sum_j exp(s_j - M),  acc = acc*exp(m - M) + sum_j exp(s_j - M) v_j

and at the end `out = acc / l`. The state lives in `m`, `l`, `acc` (global memory, one row per query),
so it survives from one launch to the next; it starts at `m = -inf`, `l = 0`, `acc = 0`.

```
round s, device d: kv@d[s % 2] holds the block of device (d - s) mod N (slot 0: its own)
  attend_block     queries of d x that block -> m, l, acc   (out = acc / l in the last round)
  pass_block       kv@d[(s + 1) % 2] = kv@(d-1)[s % 2]: the left neighbour's block this round
```

Two slots for the same reason as puzzle 65: this round's block is read while next round's arrives.

**Example** (`N = 2`, `R = 1`, `D = {D}`, scale 1/4; only the first dimension of `q` and `k` is non-zero;
`v@0` is all 10, `v@1` all 20): `q@0 = (4, 0, ..)`, `q@1 = (8, 0, ..)`, `k@0 = (1, 0, ..)`, `k@1 = (2, 0, ..)`.

```
device 0  round 0, own block   score 1  m = 1  l = 1                acc = 10
          round 1, block of 1  score 2  m = 2  l = e^-1 + 1 = 1.368 acc = 10e^-1 + 20 = 23.679
                                                                    out = acc / l = 17.311
device 1  round 0, own block   score 4  m = 4  l = 1                acc = 20
          round 1, block of 0  score 2  m = 4  l = 1 + e^-2 = 1.135 acc = 20 + 10e^-2 = 21.353
                                                                    out = acc / l = 18.808
```

**What's new:** sequence (context) parallelism — attention over a sequence spread across devices, the
keys and values moving instead of the queries, each link carrying `N - 1` blocks.

**Launch:** `N` rounds; in round `s`, on every device `d`: `attend_block(q, kv, slot, m, l, acc, out, scale,
step, steps)` (`slot = s % 2`, `step = s`, `steps = N`) on one block of `({R_MAX}, {R_MAX})` threads; then, except in
the last round, `pass_block(kv, left_kv, slot)` with `left_kv = kv@(d-1)` on `ceil(2 R {D} / 128)` blocks of
128 threads, one element each; then all devices synchronise. `q@d` is `R x {D}`, `kv@d` is `2 x 2 x R x {D}`
(slot, key or value, row, dimension); `R <= {R_MAX}`. In `attend_block`, thread `(x, y)` belongs to query row
`y`: it loads element `x` of row `y` of `q`, of the keys and of the values into shared memory (one read of
each), computes the score of key `x` for query `y`, and after a barrier merges column `x` of the output row
(`D = {D} = {R_MAX}` columns): at most 2 reads of `kv` per thread. ★★: each key/value block crosses each link
once. ★★★: coalesced.

**Read more:** {READING}
"""


def spec(**buffers) -> dict[str, np.ndarray]:
    ranks = sum(1 for k in buffers if k.startswith("q@"))
    keys = np.vstack([buffers[at("kv", d)][0, 0] for d in range(ranks)]).astype(np.float64)
    values = np.vstack([buffers[at("kv", d)][0, 1] for d in range(ranks)]).astype(np.float64)
    scale = float(buffers["scale"])
    out = {}
    for d in range(ranks):
        s = buffers[at("q", d)].astype(np.float64) @ keys.T * scale
        e = np.exp(s - s.max(axis=1, keepdims=True))
        out[at("out", d)] = ((e / e.sum(axis=1, keepdims=True)) @ values).astype(np.float32)
    return out


def _case(name: str, q: np.ndarray, k: np.ndarray, v: np.ndarray, ranks: int, note: str) -> Case:
    n = q.shape[0]
    rows = n // ranks
    assert rows * ranks == n and 1 <= rows <= R_MAX and q.shape[1] == D
    buffers: dict = {"scale": np.float32(1.0 / np.sqrt(D))}
    for d in range(ranks):
        part = slice(d * rows, (d + 1) * rows)
        kv = np.full((2, 2, rows, D), np.nan, np.float32)
        kv[0, 0], kv[0, 1] = k[part], v[part]
        buffers[at("q", d)] = q[part].astype(np.float32)
        buffers[at("kv", d)] = kv
        buffers[at("m", d)] = np.full(rows, -np.inf, np.float32)
        buffers[at("l", d)] = np.zeros(rows, np.float32)
        buffers[at("acc", d)] = np.zeros((rows, D), np.float32)
        buffers[at("out", d)] = np.full((rows, D), np.nan, np.float32)
    steps: list = []
    for s in range(ranks):
        for d in range(ranks):
            steps.append(LaunchStep("attend_block", 1, (R_MAX, R_MAX),
                                    (at("q", d), at("kv", d), s % 2, at("m", d), at("l", d), at("acc", d),
                                     at("out", d), "scale", s, ranks), device=d))
            if s < ranks - 1:
                steps.append(LaunchStep("pass_block", -(-2 * rows * D // 128), 128,
                                        (at("kv", d), at("kv", (d - 1) % ranks), s % 2), device=d))
        steps.append(Sync())
    ideal = budget(((d - 1) % ranks, d, (ranks - 1) * 2 * rows * D * 4) for d in range(ranks))
    return Case(name, buffers, tuple(steps), note, devices=Devices(ranks, "ring", ideal))


def _worked() -> Case:
    q, k = np.zeros((2, D)), np.zeros((2, D))
    q[:, 0], k[:, 0] = (4.0, 8.0), (1.0, 2.0)
    v = np.repeat(np.array([[10.0], [20.0]]), D, axis=1)
    return _case("worked example N=2 R=1", q, k, v, 2, "the example of the description: 17.311 and 18.808")


def _random(name: str, rng: np.random.Generator, ranks: int, rows: int, note: str, q_scale: float = 1.0,
            rising: bool = False) -> Case:
    n = ranks * rows
    q = rng.normal(0, 1, (n, D)) * q_scale
    k = rng.normal(0, 1, (n, D))
    if rising:   # keys of later devices score higher: each round's block has a new maximum
        k += np.linspace(-2, 2, n)[:, None] * np.sign(q.mean(axis=0))[None, :]
    return _case(name, q, k, rng.normal(0, 1, (n, D)), ranks, note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(70) if rng is None else rng
    rows = int(rng.integers(5, 15))
    return (
        _worked(),
        _random(f"4 devices R={rows}", rng, 4, rows, f"{rows} tokens per device: rows and keys {rows} .. "
                f"{R_MAX - 1} of the block have no work"),
        _random("3 devices R=16 rising", rng, 3, 16, "scores grow from device to device: a merge that does not "
                "rescale acc and l by exp(m - M) is far off", rising=True),
        _random("2 devices R=7 large", rng, 2, 7, "queries scaled so scores reach the hundreds: exp needs the "
                "running maximum subtracted", q_scale=30.0),
        _random("5 devices R=3", rng, 5, 3, "five rounds: both slots reused twice"),
    )


def bench_max(ranks: int = 8) -> Case:
    """The longest blocks on ``ranks`` devices (how many GPUs a graduate run has)."""
    return _random(f"bench {ranks} devices R={R_MAX}", np.random.default_rng(70), ranks, R_MAX,
                   f"graduate-mode timing: the largest case, {ranks} devices of the longest blocks")


PUZZLE = Puzzle(
    slug="ring-attention",
    number=70,
    title="Ring attention",
    chapter=10,
    difficulty=5,
    description=DESCRIPTION,
    kernels=("attend_block", "pass_block"),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    scratch=("kv", "m", "l", "acc"),   # written by the kernels, not judged
    constraints=(
        must_use_shared(),
        max_global_reads_per_thread(2, "kv"),
        max_global_reads_per_thread(1, "q"),
        max_global_writes_per_thread(1, "out"),
        max_global_writes_per_thread(1, "acc"),
        no_atomics(),
        no_peer_stores(),
    ),
    stars=(
        Star(2, "each key/value block crosses each link once", (within_link_budget("ring attention"),)),
        Star(3, "coalesced loads and stores", (ideal_coalescing(),)),
    ),
    hints=(
        "`pass_block`: element `e = cuda.grid(1)` of the `2 x R x D` block is `(e // (R*D), e // D % R, e % D)`; "
        "copy `left_kv[slot, ...]` into `kv[(slot + 1) % 2, ...]`. In `attend_block`, `x = threadIdx.x`, "
        "`y = threadIdx.y`, `keys = kv.shape[2]`; the block's keys are `kv[slot, 0]`, its values `kv[slot, 1]`.",
        "Shared tiles `q_t`, `k_t`, `v_t` (`R_MAX x D`) and `s_t` (`R_MAX x R_MAX`). Phase 1 (after loading and "
        "a barrier): `s_t[y, x] = scale * sum_c q_t[y, c] * k_t[x, c]` for `x < keys`. Read `m[y]` and `l[y]` "
        "into registers before a second barrier; phase 2: every thread of row `y` finds the new maximum over "
        "`s_t[y, :keys]` and merges column `x`. Only thread `x == 0` stores `m[y]` and `l[y]`.",
        "```python\nm_new = m_old\nfor j in range(keys):\n    m_new = max(m_new, s_t[y, j])\n"
        "corr = math.exp(m_old - m_new)        # 0 in the first round: m_old = -inf\n"
        "total = l_old * corr\na = acc[y, x] * corr\nfor j in range(keys):\n    p = math.exp(s_t[y, j] - m_new)\n"
        "    total += p\n    a += p * v_t[j, x]\n```",
    ),
    reading=READING,
    rtol=1e-4,
    atol=1e-5,
    bench_max=bench_max,
    bench_note=f"attend_block is one block of ({R_MAX}, {R_MAX}) threads with one key block in shared memory, so a "
               f"device holds at most {R_MAX} tokens: the case cannot grow past 8 devices of {R_MAX}",
)
