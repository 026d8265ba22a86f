"""Puzzle 68 — Row-parallel linear (Megatron): partial products on every device, reduce-scattered back to
sequence-sharded rows, the bias added once."""

from __future__ import annotations

import numpy as np

from gpusim.device import MAX_GRID
from puzzles.model import Case, Devices, LaunchStep, Puzzle, Star, Sync
from puzzles.rules import ideal_coalescing, max_global_writes_per_thread, no_atomics

from .layout import at, budget
from .rules import no_peer_stores, within_link_budget

TX, TY = 32, 8                   # threads per block: 32 output columns x 8 rows

READING = ("*Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism* (2019) — "
           "Shoeybi et al., section 3 (the second GEMM split by rows, one all-reduce per MLP), and *The "
           "Ultra-Scale Playbook* — Hugging Face, section \"Sequence Parallelism\" (the all-reduce becomes a "
           "reduce-scatter)")

DESCRIPTION = f"""\
# Puzzle 68 — Row-parallel linear (Megatron)

Puzzle 67 left device `d` with `y@d` (`M x C`): columns `d*C ..` of the MLP's hidden activation `Y`. The
second linear layer `Z = Y W + b` (`W` is `H x D`) is split the other way, by **rows**: device `d` holds
`w@d`, rows `d*C .. d*C + C - 1` of `W` — exactly the rows its columns of `Y` multiply. Each device
computes a **partial product** over its part of the inner dimension:

```
Y W = [ y@0 | y@1 | ... ] . [ w@0 ; w@1 ; ... ] = y@0 w@0 + y@1 w@1 + ... + y@(N-1) w@(N-1)
                                                  part@0    part@1          part@(N-1)
                                                  (each M x D)
```

No device has any row of `Z` yet: every row is a **sum over devices**. Megatron all-reduces the partials
(one all-reduce per MLP); with sequence parallelism each device needs only its own `R` rows of `Z`
(`M = N * R`), so a **reduce-scatter** does, moving half the bytes: device `d` adds rows `d*R ..` of every
device's partial. The bias comes **after** the sum, once — added on every device's partial it would be
counted `N` times — and so would any nonlinearity: `gelu(p0 + p1)` is not `gelu(p0) + gelu(p1)`.

**Example** (`N = 2`, `R = 1`, `C = 1`, `D = 2`): `y@0 = [[1], [2]]`, `y@1 = [[3], [4]]`, `w@0 = [[1, 2]]`,
`w@1 = [[10, 20]]`, `b = [0.5, 0.5]`:

```
part@0 = y@0 w@0 = [[1, 2], [2, 4]]        part@1 = y@1 w@1 = [[30, 60], [40, 80]]
z@0 = part@0[0] + part@1[0] + b = [31.5, 62.5]
z@1 = part@0[1] + part@1[1] + b = [42.5, 84.5]
```

**What's new:** partial sums across devices: a layer whose every output needs every device, and where the
bias (and any nonlinearity) must wait for the reduction.

**Launch:** on every device `d`, `partial_product(y, w, part)` (`part@d = y@d w@d`, `M x D`) on
`(ceil(D / {TX}), ceil(M / {TY}))` blocks of `({TX}, {TY})`: thread `(c, r)` of block `(bx, by)` computes
`part[by*{TY} + r, bx*{TX} + c]`. Then all devices synchronise. Then on every device `d`, for `s = 0 .. N-1`,
`reduce_rows(z, part_src, bias, row0, step, steps)` with `part_src = part@((d + s) mod N)`, `row0 = d * R`,
`step = s`, `steps = N`, on `(ceil(D / {TX}), ceil(R / {TY}))` blocks: `z[r, c]` (`z@d`, `R x D`) is
`part_src[row0 + r, c]` at step 0, plus it at the later steps, plus `bias[c]` at the last. ★★: each
partial row a device needs crosses its link once. ★★★: coalesced.

**Read more:** {READING}
"""


def spec(**buffers) -> dict[str, np.ndarray]:
    ranks = sum(1 for k in buffers if k.startswith("y@"))
    y = np.hstack([buffers[at("y", d)] for d in range(ranks)]).astype(np.float64)
    w = np.vstack([buffers[at("w", d)] for d in range(ranks)]).astype(np.float64)
    z = y @ w + buffers[at("b", 0)]
    rows = z.shape[0] // ranks
    return {at("z", d): z[d * rows:(d + 1) * rows].astype(np.float32) for d in range(ranks)}


def _case(name: str, y: np.ndarray, w: np.ndarray, b: np.ndarray, ranks: int, note: str) -> Case:
    m, h = y.shape
    d_out = w.shape[1]
    rows, cols = m // ranks, h // ranks
    assert rows * ranks == m and cols * ranks == h
    buffers = {}
    for d in range(ranks):
        buffers[at("y", d)] = np.ascontiguousarray(y[:, d * cols:(d + 1) * cols], dtype=np.float32)
        buffers[at("w", d)] = w[d * cols:(d + 1) * cols].astype(np.float32)
        buffers[at("b", d)] = b.astype(np.float32)
        buffers[at("part", d)] = np.full((m, d_out), np.nan, np.float32)
        buffers[at("z", d)] = np.full((rows, d_out), np.nan, np.float32)
    gx = -(-d_out // TX)
    steps: list = [LaunchStep("partial_product", (gx, -(-m // TY)), (TX, TY),
                              (at("y", d), at("w", d), at("part", d)), device=d) for d in range(ranks)]
    steps.append(Sync())
    for d in range(ranks):
        for s in range(ranks):
            steps.append(LaunchStep("reduce_rows", (gx, -(-rows // TY)), (TX, TY),
                                    (at("z", d), at("part", (d + s) % ranks), at("b", d), d * rows, s, ranks),
                                    device=d))
    ideal = budget((q, d, rows * d_out * 4) for d in range(ranks) for q in range(ranks) if q != d)
    return Case(name, buffers, tuple(steps), note, devices=Devices(ranks, "switch", ideal))


def _random(name: str, rng: np.random.Generator, ranks: int, rows: int, cols: int, d_out: int, note: str) -> Case:
    y = rng.normal(0, 1, (ranks * rows, ranks * cols))
    w = rng.normal(0, 1, (ranks * cols, d_out)) / np.sqrt(ranks * cols)
    b = rng.normal(0, 1, d_out) + 3.0       # a bias far from zero: adding it N times cannot pass
    return _case(name, y, w, b, ranks, note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(68) if rng is None else rng
    rows = int(rng.integers(5, 20))
    return (
        _case("worked example N=2", np.array([[1.0, 3.0], [2.0, 4.0]]), np.array([[1.0, 2.0], [10.0, 20.0]]),
              np.array([0.5, 0.5]), 2, "the example of the description"),
        _random(f"4 devices R={rows} C=16 D=64", rng, 4, rows, 16, 64, f"{rows} rows per device"),
        _random("2 devices R=24 C=32 D=40", rng, 2, 24, 32, 40, "D = 40: the second column of blocks is "
                "mostly idle"),
        _random("3 devices R=3 C=8 D=32", rng, 3, 3, 8, 32, "three devices, three rows each"),
    )


def bench(n: int, ranks: int = 4) -> Case:
    """About n output elements over ``ranks`` devices (how many GPUs a graduate run has), at most as many rows
    as a grid's y dimension reaches (65,535 blocks of TY rows: 2^26 outputs would need 65,536)."""
    rows = min(max(TY, n // (ranks * 128)), MAX_GRID[1] * TY // ranks)
    return _random(f"bench {ranks} devices R={rows}", np.random.default_rng(68), ranks, rows, 64, 128,
                   f"graduate-mode timing: about n output elements over {ranks} devices")


PUZZLE = Puzzle(
    slug="row-parallel",
    number=68,
    title="Row-parallel linear",
    chapter=10,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("partial_product", "reduce_rows"),
    spec=spec,
    make_cases=make_cases,
    outputs=("z",),
    scratch=("part",),   # written by the kernels, not judged
    constraints=(
        max_global_writes_per_thread(1, "part"),
        max_global_writes_per_thread(1, "z"),
        no_atomics(),
        no_peer_stores(),
    ),
    stars=(
        Star(2, "each partial row crosses its link once", (within_link_budget("a reduce-scatter"),)),
        Star(3, "coalesced loads and stores", (ideal_coalescing(),)),
    ),
    hints=(
        "`partial_product` is a plain matrix product, one output per thread: `part[r, c] = sum over k of "
        "y[r, k] * w[k, c]` for `k < y.shape[1]`. In `reduce_rows`, thread `(c, r)` owns `z[r, c]`.",
        "`value = part_src[row0 + r, c]`; at `step == 0` store it; later add it to `z[r, c]`; at "
        "`step == steps - 1` add `bias[c]` too — only then.",
        "```python\nv = part_src[row0 + r, c]\nif step > 0:\n    v += z[r, c]\nif step == steps - 1:\n"
        "    v += bias[c]\nz[r, c] = v\n```",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-5,
    bench=bench,
)
