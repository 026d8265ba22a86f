"""Puzzle 65 — Reduce-scatter: rank r ends with the mean of shard r over all ranks, out of place, through
a two-slot staging buffer."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, Devices, LaunchStep, Puzzle, Star, Sync
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread, no_atomics

from .layout import at, budget, spread
from .rules import no_peer_stores, within_link_budget

TPB = 128
MAX_RANKS = 8
ALIGN = 8                       # shard sizes are multiples of 8 float32: every shard starts on a sector

READING = ("*ZeRO: Memory Optimizations Toward Training Trillion Parameter Models* (2019) — Rajbhandari et "
           "al., section 5 (gradient partitioning: a reduce-scatter), and *The Ultra-Scale Playbook* — Hugging "
           "Face, section \"ZeRO\"")

DESCRIPTION = f"""\
# Puzzle 65 — Reduce-scatter

In puzzle 63 (ZeRO), rank `r` updates only its **shard** `r` of the parameters, so it needs only shard `r`
of the averaged gradient. Computing the whole all-reduce and throwing `N - 1` shards away would waste half
of it: the first half of the ring all-reduce, **reduce-scatter**, is exactly what ZeRO needs. Each rank
receives `(N - 1)` shards — `(N - 1) / N` of a vector, half of an all-reduce.

Each rank has `grads` (`n = N * S` float32: `N` shards of `S`) and must produce `out` (`S` float32): the
**mean** of shard `d` over all ranks. This collective is *out of place*: `grads` is never written (NCCL's
reduce-scatter leaves its input alone too), and besides `out` a rank has only `send` (`2 x S`): **two
slots** of staging memory, not a whole vector. Rank `d` may read its left neighbour's `send` only.

Round `s = 0 .. N-1` (all ranks at once, then a synchronisation), rank `d` works on shard
`c = (d - 1 - s) mod N`:

```
round 0           send[0]     = grads[shard c]                           start a partial sum
round s (middle)  send[s % 2] = left.send[(s-1) % 2] + grads[shard c]    add yours, pass it on
round N - 1       out         = (left.send[(N-2) % 2] + grads[shard d]) / N     (c = d: yours)
```

Why two slots? In round `s` you *read* your left neighbour's slot `(s-1) % 2` while it *writes* its slot
`s % 2`, and your right neighbour reads the slot you wrote last round while you write the other one. With
one slot a rank would overwrite what its neighbour is reading, in the same round: a race between devices.

**Example** (`N = 3`, `S = 8`; the 8 values of a shard are equal, shown once):

```
              rank 0                 rank 1                 rank 2
grads         1  2  3                10 20 30               100 200 300     (shards 0 1 2)
round 0       send[0] = 3 (shard 2)  send[0] = 10 (0)       send[0] = 200 (1)
round 1       send[1] = 200 + 2      send[1] = 3 + 30       send[1] = 10 + 100
round 2       out = (110 + 1) / 3    out = (202 + 20) / 3   out = (33 + 300) / 3
              = 37 (shard 0)         = 74 (shard 1)         = 111 (shard 2)
```

The sum of shard `c` starts at rank `c + 1` and ends at rank `c`: `((g@(c+1) + g@(c+2)) + ...) + g@c`,
then divided by `N` in float32 — checked bit for bit (divide: `x * (1/3)` is not `x / 3` in floating point).

**What's new:** an out-of-place collective through a small staging buffer — double buffering, so that what
a neighbour reads this round is not what you write this round.

**Launch:** `N` rounds; in each, on every rank `d`, `reduce_scatter_step(grads, send, left_send, out, rank,
step, ranks)` with `grads`, `send`, `out` of rank `d` and `left_send` = `send@(d-1)`, then a synchronisation.
Each launch has `ceil(S / {TPB})` blocks of {TPB} threads: thread `j` handles element `j` of the shard.
`S = out.size` is a multiple of {ALIGN}; up to {MAX_RANKS} ranks. ★★: each link carries `N - 1` shards, no more.
★★★: coalesced.

**Read more:** {READING}
"""


def ring_mean(grads: list[np.ndarray], shard: int, c: int) -> np.ndarray:
    """Shard c summed in float32 from rank c + 1 around to rank c, divided by N in float32."""
    ranks = len(grads)
    part = slice(c * shard, (c + 1) * shard)
    acc = grads[(c + 1) % ranks][part].copy()
    for k in range(2, ranks + 1):
        acc = acc + grads[(c + k) % ranks][part]
    return acc / np.float32(ranks)


def spec(**buffers) -> dict[str, np.ndarray]:
    ranks = sum(1 for k in buffers if k.startswith("grads@"))
    grads = [buffers[at("grads", d)] for d in range(ranks)]
    shard = buffers[at("out", 0)].size
    return {at("out", d): ring_mean(grads, shard, d) for d in range(ranks)}


def _case(name: str, grads: np.ndarray, note: str) -> Case:
    ranks, n = grads.shape
    shard = n // ranks
    assert shard * ranks == n and shard % ALIGN == 0 and 2 <= ranks <= MAX_RANKS
    buffers: dict = {}
    for d in range(ranks):
        buffers[at("grads", d)] = grads[d].astype(np.float32)
        buffers[at("send", d)] = np.full((2, shard), np.nan, np.float32)
        buffers[at("out", d)] = np.full(shard, np.nan, np.float32)
    grid = -(-shard // TPB)
    steps: list = []
    for s in range(ranks):
        steps += [LaunchStep("reduce_scatter_step", grid, TPB,
                             (at("grads", d), at("send", d), at("send", (d - 1) % ranks), at("out", d), d, s,
                              ranks), device=d) for d in range(ranks)]
        steps.append(Sync())
    ideal = budget(((d - 1) % ranks, d, 4 * shard * (ranks - 1)) for d in range(ranks))
    return Case(name, buffers, tuple(steps), note, devices=Devices(ranks, "ring", ideal))


def _worked() -> Case:
    shards = np.array([[1, 2, 3], [10, 20, 30], [100, 200, 300]], np.float32)
    return _case("worked example N=3 S=8", np.repeat(shards, 8, axis=1),
                 "the example of the description: rank d ends with 37, 74, 111")


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(65) if rng is None else rng
    s4 = ALIGN * int(rng.integers(20, 40))
    return (
        _worked(),
        _case(f"4 ranks S={s4}", spread(rng, (4, 4 * s4)), "magnitudes from 1e-3 to 1e3: only the ring's order of "
              "additions gives the checked bits"),
        _case("2 ranks S=40", spread(rng, (2, 80)), "two ranks: round 0 stages, round 1 finishes"),
        _case("3 ranks S=136", spread(rng, (3, 408)), "an odd number of ranks (the mean divides by 3) and a "
              "shard that ends 8 elements into its second block"),
        _case("8 ranks S=520", spread(rng, (8, 8 * 520)), "the most ranks: 8 rounds, both slots reused 3 times"),
        _case("5 ranks S=8", spread(rng, (5, 40)), "one sector per shard: 120 of the 128 threads have nothing"),
    )


def bench(n: int, ranks: int = MAX_RANKS) -> Case:
    """A reduce-scatter of about n float32 per rank (``ranks``: how many GPUs a graduate run has)."""
    shard = max(ALIGN, n // ranks // ALIGN * ALIGN)
    return _case(f"bench {ranks} ranks S={shard}", spread(np.random.default_rng(65), (ranks, ranks * shard)),
                 f"graduate-mode timing: a reduce-scatter of about n float32 over {ranks} ranks")


PUZZLE = Puzzle(
    slug="reduce-scatter",
    number=65,
    title="Reduce-scatter",
    chapter=10,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("reduce_scatter_step",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    scratch=("send",),   # written by the kernels, not judged
    constraints=(
        max_global_writes_per_thread(0, "grads"),
        max_global_reads_per_thread(1, "grads"),
        max_global_writes_per_thread(1, "send"),
        no_atomics(),
        no_peer_stores(),
    ),
    stars=(
        Star(2, "bandwidth-optimal: each link carries N - 1 shards, each element once",
             (within_link_budget("a ring reduce-scatter"),)),
        Star(3, "coalesced loads and stores", (ideal_coalescing(),)),
    ),
    hints=(
        "Thread `j = cuda.grid(1)` (return if `j >= S`, with `S = out.size`) works on element "
        "`i = c * S + j` of `grads`, where `c = (rank - 1 - step) % ranks`.",
        "Three cases by `step`: `0` copies `grads[i]` into `send[0, j]`; the last (`ranks - 1`) writes "
        "`out[j]`; the others write `send[step % 2, j] = left_send[(step - 1) % 2, j] + grads[i]`.",
        "```python\nif step == 0:\n    send[0, j] = grads[i]\nelse:\n"
        "    total = left_send[(step - 1) % 2, j] + grads[i]\n    if step == ranks - 1:\n"
        "        out[j] = total / numba.float32(ranks)\n    else:\n        send[step % 2, j] = total\n```",
    ),
    reading=READING,
    bench=bench,
)
