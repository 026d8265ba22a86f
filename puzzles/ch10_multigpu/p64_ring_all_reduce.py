"""Puzzle 64 — Ring all-reduce: every device ends with the sum of all devices' vectors, each link carrying
2(N - 1)/N of a vector."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, Devices, LaunchStep, Puzzle, Star, Sync
from puzzles.rules import ideal_coalescing, max_global_writes_per_thread, no_atomics

from .layout import at, budget, chunk_bounds, chunk_len, chunk_size, spread
from .rules import no_peer_stores, within_link_budget

TPB = 128
MAX_RANKS = 8

READING = ("*The Ultra-Scale Playbook* — Hugging Face, section \"Data Parallelism\" (all-reduce, ring "
           "all-reduce as reduce-scatter then all-gather), and *Getting Started with Distributed Data Parallel* "
           "— PyTorch")

DESCRIPTION = f"""\
# Puzzle 64 — Ring all-reduce

Data parallelism trains one model on `N` GPUs: each GPU (a **rank**) computes the gradient of its own part
of the batch, then every rank needs the **sum** of all `N` gradients before the optimizer step. That is an
**all-reduce**. Sending every vector to every rank would move `N - 1` vectors into each rank. The ring
does it with only `2 (N - 1) / N` of one vector per rank, whatever `N` is, and keeps every link busy.

Cut each rank's vector `x` (n float32) into `N` chunks of `chunk` elements (`chunk = ceil(n / N)` rounded up
to 8, so every chunk starts on a 32-byte sector; the last chunks may be short or empty). The ranks stand
in a ring, and rank `d` may read only its **left** neighbour `d - 1`:

```
   x@0 ──▶ x@1 ──▶ x@2 ──▶ ... ──▶ x@(N-1) ──┐      a launch on rank d reads x@d (its own)
    ▲                                         │      and x@(d-1) (its left neighbour's,
    └─────────────────────────────────────────┘      over the link)
```

1. **Reduce-scatter**, steps `s = 0 .. N-2`: rank `d` adds its left neighbour's chunk
   `c = (d - 1 - s) mod N` into its own: `x@d[chunk c] += x@(d-1)[chunk c]`. Chunk `c` starts at rank
   `c`, picks up one more rank's values at each step, and after `N - 1` steps rank `c - 1` holds its sum.
2. **All-gather**, steps `s = 0 .. N-2`: rank `d` copies its left neighbour's chunk `c = (d - s) mod N`:
   `x@d[chunk c] = x@(d-1)[chunk c]`. The finished chunks travel on around the ring.

Every step, all ranks work at once and every link carries one chunk; between steps the ranks
synchronise. **Example** (`N = 3`, `n = 24`, `chunk = 8`; each chunk's 8 values are equal, shown once):

```
                 rank 0          rank 1          rank 2
start            1   2   3       10  20  30      100 200 300
reduce  s = 0    1   2  303      11  20  30      100 220 300   rank 1 adds rank 0's chunk 0, ...
reduce  s = 1    1  222 303      11  20 333      111 220 300   chunk c complete on rank c - 1
gather  s = 0   111 222 303      11 222 333      111 220 333
gather  s = 1   111 222 333     111 222 333      111 222 333
```

Each link carried `2 (N - 1) = 4` chunks of 32 bytes: `2 (N - 1) / N` of a 96-byte vector.

The sum of chunk `c` is added up in ring order, `((x@c + x@(c+1)) + x@(c+2)) + ...` (ranks mod `N`), in
float32 — and that is exactly what is checked, bit for bit. Different chunks are summed in different
orders, so all-reduce results are not the bits of `x@0 + x@1 + ...`: a fact worth knowing when two runs
of a training job disagree in the last bit.

**What's new:** several devices. Each rank's arrays live on that rank (the buffer `x@2` is rank 2's `x`),
a kernel may read a neighbour's array over the link, gpusim counts the bytes every link carries, and
finds races between devices: reading a chunk your neighbour is writing in the same step is one.

**Launch:** for each step, on every rank `d`, `reduce_step(x, left, rank, step, ranks, chunk)` (then all
ranks synchronise), then the same for `gather_step`; `x` is `x@d`, `left` is `x@(d-1)`, `rank = d`. Each
launch has `ceil(chunk / {TPB})` blocks of {TPB} threads: thread `j` of the launch handles element `j` of its
chunk. Up to {MAX_RANKS} ranks. ★★: no link carries more than the ring needs (one read of each chunk
element per step). ★★★: coalesced loads and stores.

**Read more:** {READING}
"""


def ring_sum(xs: list[np.ndarray], size: int) -> np.ndarray:
    """The all-reduce result: chunk c summed in float32 in ring order, starting at rank c."""
    ranks, n = len(xs), xs[0].size
    out = np.empty(n, np.float32)
    for c in range(ranks):
        start, end = chunk_bounds(c, n, size)
        acc = xs[c][start:end].copy()
        for k in range(1, ranks):
            acc = acc + xs[(c + k) % ranks][start:end]
        out[start:end] = acc
    return out


def spec(**buffers) -> dict[str, np.ndarray]:
    xs = [buffers[at("x", d)] for d in range(len([k for k in buffers if k.startswith("x@")]))]
    total = ring_sum(xs, chunk_size(xs[0].size, len(xs)))
    return {at("x", d): total.copy() for d in range(len(xs))}


def link_budget(ranks: int, n: int) -> dict[str, int]:
    """Bytes over link d-1 -> d: the chunks (d - 1 - s) while reducing and (d - s) while gathering."""
    size = chunk_size(n, ranks)
    return budget(((d - 1) % ranks, d, 4 * sum(chunk_len((d - 1 - s) % ranks, n, size) +
                                               chunk_len((d - s) % ranks, n, size) for s in range(ranks - 1)))
                  for d in range(ranks) if ranks > 1)


def _case(name: str, data: np.ndarray, note: str) -> Case:
    ranks, n = data.shape
    size = chunk_size(n, ranks)
    grid = -(-size // TPB)
    buffers = {at("x", d): data[d].astype(np.float32) for d in range(ranks)}
    steps: list = []
    for kernel in ("reduce_step", "gather_step"):
        for s in range(ranks - 1):
            steps += [LaunchStep(kernel, grid, TPB, (at("x", d), at("x", (d - 1) % ranks), d, s, ranks, size),
                                 device=d) for d in range(ranks)]
            steps.append(Sync())
    return Case(name, buffers, tuple(steps), note,
                devices=Devices(ranks, "ring", link_budget(ranks, n)))


def _worked() -> Case:
    chunks = np.array([[1, 2, 3], [10, 20, 30], [100, 200, 300]], np.float32)
    return _case("worked example N=3 n=24", np.repeat(chunks, 8, axis=1),
                 "the example of the description: every rank ends with 111, 222, 333")


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(64) if rng is None else rng
    n4 = int(rng.integers(900, 1100))
    n8 = int(rng.integers(3000, 4200))
    return (
        _worked(),
        _case(f"4 ranks n={n4}", spread(rng, (4, n4)), f"chunks of {chunk_size(n4, 4)}, the last one shorter; "
              "magnitudes from 1e-3 to 1e3, so only the ring's order of additions gives the checked bits"),
        _case("2 ranks n=37", spread(rng, (2, 37)), "two ranks: one step each way, both links used"),
        _case("5 ranks n=5", spread(rng, (5, 5)), "fewer elements than one chunk: chunk 0 holds all 5, chunks "
              "1-4 are empty and the ranks that handle them do nothing that step"),
        _case(f"8 ranks n={n8}", spread(rng, (8, n8)), "the most ranks: 14 steps"),
        _case("3 ranks n=300", spread(rng, (3, 300)), f"chunk = {chunk_size(300, 3)}: chunk 2 is 92 long and "
              "ends in the middle of a block"),
    )


def bench(n: int, ranks: int = MAX_RANKS) -> Case:
    """An all-reduce of n float32 per rank (``ranks``: how many GPUs a graduate run has)."""
    return _case(f"bench {ranks} ranks n={n}", spread(np.random.default_rng(64), (ranks, n)),
                 f"graduate-mode timing: an all-reduce of n float32 over {ranks} ranks")


PUZZLE = Puzzle(
    slug="ring-all-reduce",
    number=64,
    title="Ring all-reduce",
    chapter=10,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("reduce_step", "gather_step"),
    spec=spec,
    make_cases=make_cases,
    outputs=("x",),
    constraints=(
        max_global_writes_per_thread(1, "x"),
        no_atomics(),
        no_peer_stores(),
    ),
    stars=(
        Star(2, "bandwidth-optimal: each link carries 2(N-1) chunks, each element once",
             (within_link_budget("a ring all-reduce"),)),
        Star(3, "coalesced loads and stores", (ideal_coalescing(),)),
    ),
    hints=(
        "Thread `j = cuda.grid(1)` handles element `i = c * chunk + j` of the step's chunk `c`; it does "
        "nothing if `j >= chunk` or `i >= x.size` (short and empty chunks).",
        "Reduce step: `c = (rank - 1 - step) % ranks`, then `x[i] += left[i]`. Gather step: "
        "`c = (rank - step) % ranks`, then `x[i] = left[i]`. Chunk `rank - 1 - step` is the one your left "
        "neighbour finished adding to in the step before.",
        "```python\nj = cuda.grid(1)\nc = (rank - 1 - step) % ranks     # gather: (rank - step) % ranks\n"
        "i = c * chunk + j\nif j < chunk and i < x.size:\n    x[i] += left[i]           # gather: x[i] = left[i]\n```",
    ),
    reading=READING,
    bench=bench,
)
