"""Puzzle 66 — All-gather on a bidirectional ring: half of every shard travels each way, so both directions
of every link carry half the traffic."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, Devices, LaunchStep, Puzzle, Star, Sync
from puzzles.rules import ideal_coalescing, max_global_writes_per_thread, no_atomics

from .layout import at, budget, spread
from .rules import no_peer_stores, within_link_budget

TPB = 128
MAX_RANKS = 8
ALIGN = 16                      # shards are multiples of 16 float32: each half starts on a 32-byte sector

READING = ("*The Ultra-Scale Playbook* — Hugging Face, section \"ZeRO-3\" (parameters all-gathered before "
           "each layer) and its appendix on collective operations; NCCL's documentation on collectives")

DESCRIPTION = f"""\
# Puzzle 66 — All-gather, both ways round the ring

With ZeRO-3 (and PyTorch's FSDP) each rank stores only its shard of the weights; before a layer runs,
every rank needs them all: an **all-gather**. Rank `d` holds shard `d` (`S` float32) in row `d` of `out`
(`N x S`); afterwards every rank's `out` holds every shard, row `q` = rank `q`'s.

Puzzle 64's all-gather sent every shard one way round the ring: `N - 1` steps, one shard per step over
each link, in one direction. But NVLink is **full duplex**: the link from `d - 1` to `d` and the link from
`d + 1` to `d` are separate wires, and a one-way ring leaves half of them idle. So split every shard in
two halves of `H = S / 2`: the **first half travels clockwise** (rank `d` reads it from its left
neighbour `d - 1`), the **second half counter-clockwise** (from its right neighbour `d + 1`):

```
first halves:    0 ──▶ 1 ──▶ 2 ──▶ ... ──▶ N-1 ──▶ 0
second halves:   0 ◀── 1 ◀── 2 ◀── ... ◀── N-1 ◀── 0

rank d, round s = 0 .. N-2:   out[(d - 1 - s) mod N, :H] = left [same row, :H]
                              out[(d + 1 + s) mod N, H:] = right[same row, H:]
```

A half-shard a rank receives in round `s` is the one its neighbour received in round `s - 1` (or owns).
**Example** (`N = 4`, `S = 16`, `H = 8`), rank 0:

```
round 0   first half of row 3 (from rank 3)    second half of row 1 (from rank 1)
round 1   first half of row 2 (from rank 3)    second half of row 2 (from rank 1)
round 2   first half of row 1 (from rank 3)    second half of row 3 (from rank 1)
```

Each directed link carries `N - 1 = 3` half-shards (96 bytes); one-way, the four clockwise links would
carry 192 bytes each and the other four nothing: the same bytes, in twice the time.

**What's new:** links have two directions. A collective that uses both halves the bytes on the busiest
link — the quantity that decides how long a bandwidth-bound collective takes.

**Launch:** `N - 1` rounds; in each, on every rank `d`, `gather_step(out, left, right, rank, step, ranks)`
with `out = out@d`, `left = out@(d-1)`, `right = out@(d+1)`, then a synchronisation. Each launch has
`ceil(S / {TPB})` blocks of {TPB} threads: thread `j` copies column `j` (first half from `left`, second half
from `right`). `S` is a multiple of {ALIGN}; 2 to {MAX_RANKS} ranks (with two, left and right are the same rank).
★★: no directed link carries more than `N - 1` half-shards — use both directions. ★★★: coalesced.

**Read more:** {READING}
"""


def spec(**buffers) -> dict[str, np.ndarray]:
    ranks = sum(1 for k in buffers if k.startswith("out@"))
    full = np.stack([buffers[at("out", d)][d] for d in range(ranks)])
    return {at("out", d): full.copy() for d in range(ranks)}


def link_budget(ranks: int, shard: int) -> dict[str, int]:
    """First halves into d from d - 1, second halves from d + 1: N - 1 half-shards each, 4 bytes a value."""
    half = shard // 2 * 4 * (ranks - 1)
    return budget([((d - 1) % ranks, d, half) for d in range(ranks)] +
                  [((d + 1) % ranks, d, half) for d in range(ranks)])


def _case(name: str, shards: np.ndarray, note: str) -> Case:
    ranks, shard = shards.shape
    assert shard % ALIGN == 0 and 2 <= ranks <= MAX_RANKS
    buffers = {}
    for d in range(ranks):
        out = np.full((ranks, shard), np.nan, np.float32)
        out[d] = shards[d]
        buffers[at("out", d)] = out
    grid = -(-shard // TPB)
    steps: list = []
    for s in range(ranks - 1):
        steps += [LaunchStep("gather_step", grid, TPB, (at("out", d), at("out", (d - 1) % ranks),
                                                        at("out", (d + 1) % ranks), d, s, ranks), device=d)
                  for d in range(ranks)]
        steps.append(Sync())
    return Case(name, buffers, tuple(steps), note, devices=Devices(ranks, "ring", link_budget(ranks, shard)))


def _worked() -> Case:
    shards = np.repeat(np.array([[1, 10], [2, 20], [3, 30], [4, 40]], np.float32), 8, axis=1)
    return _case("worked example N=4 S=16", shards, "the example of the description: rank d's shard is "
                 "d+1 in its first half and 10(d+1) in its second")


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(66) if rng is None else rng
    s5 = ALIGN * int(rng.integers(10, 20))
    return (
        _worked(),
        _case(f"5 ranks S={s5}", spread(rng, (5, s5)), "an odd ring: the two directions meet in the middle"),
        _case("2 ranks S=48", spread(rng, (2, 48)), "two ranks: left and right are the same rank, so both "
              "halves come over the one link into each rank"),
        _case("8 ranks S=272", spread(rng, (8, 272)), "the most ranks; a shard ends 16 elements into its "
              "third block"),
        _case("3 ranks S=16", spread(rng, (3, 16)), "one sector per half-shard"),
    )


def bench(n: int, ranks: int = MAX_RANKS) -> Case:
    """An all-gather into n float32 per rank (``ranks``: how many GPUs a graduate run has)."""
    shard = max(ALIGN, n // ranks // ALIGN * ALIGN)
    return _case(f"bench {ranks} ranks S={shard}", spread(np.random.default_rng(66), (ranks, shard)),
                 f"graduate-mode timing: an all-gather of about n float32 over {ranks} ranks")


PUZZLE = Puzzle(
    slug="all-gather",
    number=66,
    title="All-gather, both ways",
    chapter=10,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("gather_step",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_writes_per_thread(1, "out"),
        no_atomics(),
        no_peer_stores(),
    ),
    stars=(
        Star(2, "both directions: no link carries more than N - 1 half-shards",
             (within_link_budget("a bidirectional ring all-gather"),)),
        Star(3, "coalesced loads and stores", (ideal_coalescing(),)),
    ),
    hints=(
        "Thread `j = cuda.grid(1)` copies one column (return if `j >= S`, `S = out.shape[1]`); columns "
        "`j < S // 2` come from the left neighbour, the others from the right.",
        "Clockwise, rank `d` receives in round `s` the row its left neighbour received in round `s - 1`: "
        "`(rank - 1 - step) % ranks`. Counter-clockwise it is `(rank + 1 + step) % ranks`, from the right.",
        "```python\nif j < half:\n    r = (rank - 1 - step) % ranks\n    out[r, j] = left[r, j]\nelse:\n"
        "    r = (rank + 1 + step) % ranks\n    out[r, j] = right[r, j]\n```",
    ),
    reading=READING,
    bench=bench,
)
