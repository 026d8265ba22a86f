"""Puzzle 67 — Column-parallel linear + GELU (Megatron), its sequence-sharded input gathered from the peers."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, Devices, LaunchStep, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_writes_per_thread, no_atomics, no_bank_conflicts

from .layout import at, budget
from .rules import no_peer_stores, within_link_budget

ROWS = 4                         # rows of x per block
K_MAX = 128                      # the longest row of x (the shared tile's width)
SQRT_2_OVER_PI = 0.7978845608028654

READING = ("*Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism* (2019) — "
           "Shoeybi et al., section 3 (the MLP split by columns, then by rows), and *The Ultra-Scale Playbook* "
           "— Hugging Face, sections \"Tensor Parallelism\" and \"Sequence Parallelism\"")

DESCRIPTION = f"""\
# Puzzle 67 — Column-parallel linear (Megatron)

A transformer MLP computes `gelu(X A + b) B`. With **tensor parallelism** its weights are split over `N`
GPUs of one node. Megatron-LM splits `A` (`K x H`) by **columns**: device `d` holds `a@d`, columns
`d*C .. d*C + C - 1` (`C = H / N`), and the matching `b@d`. Then device `d` computes its own columns of the
output, `gelu(X a@d + b@d)`, and nobody else's: GELU acts on each element alone, so it needs no other
device's columns. (Split `A` by rows instead and every device would hold a *partial sum* of every output:
they would have to add them up before GELU.)

Each device needs all of `X` (`M x K`). Outside the MLP, sequence parallelism keeps `X` split by **rows**
(tokens): device `q` holds `x@q`, rows `q*R .. q*R + R - 1`. So the layer gathers `X` as it goes: on device
`d`, launch `s` reads the rows of device `q = (d + s) mod N` straight over the switch (every device reaches
every other) and writes rows `q*R ..` of `y@d`:

```
           x@0 (R x K)  x@1          x@N-1            a@d (K x C), b@d (C)
device d: [ rows of 0 | rows of 1 | ... | rows of N-1 ] . [ columns d*C .. of A ] -> y@d (M x C)
          launch s reads x@((d + s) mod N): its own rows first, then each peer's once
```

**Example** (`N = 2`, `R = 1`, `K = 2`, `C = 1`, bias 0): `X = [[1, 2], [3, 4]]` (row 0 on device 0, row 1 on
device 1), `A = [[1, -1], [0.5, 2]]`. Device 0 has column 0 of `A`: `X a@0 = [2, 5]`, `y@0 = [gelu(2),
gelu(5)] = [1.9546, 5.0000]`; device 1 has column 1: `X a@1 = [3, 5]`, `y@1 = [2.9964, 5.0000]`.

`gelu(z) = 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3)))`, as in puzzle 37.

A row of `x@q` is used by every one of the `C` columns a device computes. Read it from the peer once per
column and it crosses the link `C` times; every byte that crosses a link costs far more than a read of
local memory (an H200's NVLink moves ~450 GB/s each way, its HBM ~4.8 TB/s). Bring each peer row in
**once**: a block loads its {ROWS} rows of `x_part` into shared memory, then its threads compute from there.

**What's new:** tensor parallelism — the weight split by columns so that each device computes whole output
columns with no communication but the input's, and remote data staged locally so that it crosses a link
once.

**Launch:** on each device `d`, for `s = 0 .. N-1`, `column_parallel(x_part, a, bias, y, row0)` with
`x_part = x@q`, `a@d`, `bias = b@d`, `y@d`, `row0 = q * R` (`q = (d + s) mod N`), on `ceil(R / {ROWS})`
blocks of `(C, {ROWS})` threads: thread `(c, t)` of block `bx` computes `y[row0 + bx*{ROWS} + t, c]`. `K <= {K_MAX}`;
`x` is read-only, so the launches need no synchronisation. ★★: each peer row crosses its link once.
★★★: coalesced, and no shared-memory bank conflicts.

**Read more:** {READING}
"""


def gelu(z: np.ndarray) -> np.ndarray:
    return 0.5 * z * (1.0 + np.tanh(SQRT_2_OVER_PI * (z + 0.044715 * z ** 3)))


def spec(**buffers) -> dict[str, np.ndarray]:
    ranks = sum(1 for k in buffers if k.startswith("x@"))
    x = np.vstack([buffers[at("x", q)] for q in range(ranks)]).astype(np.float64)
    return {at("y", d): gelu(x @ buffers[at("a", d)].astype(np.float64) + buffers[at("b", d)]).astype(np.float32)
            for d in range(ranks)}


def _case(name: str, x: np.ndarray, a: np.ndarray, b: np.ndarray, ranks: int, note: str) -> Case:
    m, k = x.shape
    rows, cols = m // ranks, a.shape[1] // ranks
    assert rows * ranks == m and cols * ranks == a.shape[1] and k <= K_MAX and cols * ROWS <= 1024
    buffers = {}
    for d in range(ranks):
        buffers[at("x", d)] = x[d * rows:(d + 1) * rows].astype(np.float32)
        buffers[at("a", d)] = a[:, d * cols:(d + 1) * cols].astype(np.float32)
        buffers[at("b", d)] = b[d * cols:(d + 1) * cols].astype(np.float32)
        buffers[at("y", d)] = np.full((m, cols), np.nan, np.float32)
    steps = []
    for d in range(ranks):
        for s in range(ranks):
            q = (d + s) % ranks
            steps.append(LaunchStep("column_parallel", -(-rows // ROWS), (cols, ROWS),
                                    (at("x", q), at("a", d), at("b", d), at("y", d), q * rows), device=d))
    ideal = budget((q, d, rows * k * 4) for d in range(ranks) for q in range(ranks) if q != d)
    return Case(name, buffers, tuple(steps), note, devices=Devices(ranks, "switch", ideal))


def _random(name: str, rng: np.random.Generator, ranks: int, rows: int, k: int, cols: int, note: str) -> Case:
    x = rng.normal(0, 1, (ranks * rows, k))
    a = rng.normal(0, 1, (k, ranks * cols)) / np.sqrt(k)
    return _case(name, x, a, rng.normal(0, 0.5, ranks * cols), ranks, note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(67) if rng is None else rng
    rows = int(rng.integers(9, 23))
    return (
        _case("worked example N=2", np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, -1.0], [0.5, 2.0]]),
              np.zeros(2), 2, "the example of the description"),
        _random(f"4 devices R={rows} K=64 C=32", rng, 4, rows, 64, 32,
                f"{rows} rows per device: the last block of each launch is partial"),
        _random("2 devices R=16 K=128 C=64", rng, 2, 16, 128, 64, "the widest rows the shared tile holds"),
        _random("3 devices R=5 K=40 C=32", rng, 3, 5, 40, 32, "K = 40: threads load a row in two passes, "
                "the second one partial"),
        _random("4 devices R=1 K=96 C=32", rng, 4, 1, 96, 32, "one row per device: three of the four threads "
                "rows of each block have none"),
    )


def bench(n: int, ranks: int = 4) -> Case:
    """About n input elements over ``ranks`` devices (how many GPUs a graduate run has)."""
    rows = max(ROWS, n // (ranks * 128))
    return _random(f"bench {ranks} devices R={rows}", np.random.default_rng(67), ranks, rows, 128, 64,
                   f"graduate-mode timing: about n input elements over {ranks} devices")


PUZZLE = Puzzle(
    slug="column-parallel",
    number=67,
    title="Column-parallel linear",
    chapter=10,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("column_parallel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("y",),
    constraints=(max_global_writes_per_thread(1, "y"), no_atomics(), no_peer_stores()),
    stars=(
        Star(2, "each row of a peer's x crosses its link once", (within_link_budget("the gathered input"),)),
        Star(3, "coalesced, no bank conflicts", (ideal_coalescing(), no_bank_conflicts())),
    ),
    hints=(
        "Thread `(c, t)` of block `bx` owns row `r = bx * ROWS + t` of `x_part` and column `c`; it writes "
        "`y[row0 + r, c]` if `r < x_part.shape[0]`.",
        "Declare `xs = cuda.shared.array((ROWS, K_MAX), numba.float32)`. The `C` threads of row `t` copy "
        "`x_part[r, k]` for `k = c, c + C, ...` into `xs[t, k]`; `cuda.syncthreads()`; then "
        "`z = bias[c] + sum over k of xs[t, k] * a[k, c]` and GELU.",
        "```python\nif r < rows:\n    for k in range(c, width, cuda.blockDim.x):\n        xs[t, k] = x_part[r, k]\n"
        "cuda.syncthreads()\nif r < rows:\n    z = bias[c]\n    for k in range(width):\n"
        "        z += xs[t, k] * a[k, c]\n"
        "    y[row0 + r, c] = 0.5 * z * (1.0 + math.tanh(SQRT_2_OVER_PI * (z + 0.044715 * z * z * z)))\n```",
    ),
    reading=READING,
    rtol=1e-4,
    atol=1e-5,
    bench=bench,
)
