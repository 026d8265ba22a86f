"""Puzzle 58 — Activation recomputation: rebuild an activation in the backward pass instead of storing it."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    no_atomics,
)

BLOCK = (32, 4)          # 32 columns (one warp) x 4 rows per block
K = 0.7978845608028654   # sqrt(2 / pi)
A = 0.044715
VECTORS = ("w1", "b1", "w2", "b2")

READING = ("*Transformer Math 101* — EleutherAI, the section *Activations and Batch Size* (activation "
           "memory with and without recomputation)")

DESCRIPTION = f"""\
# Puzzle 58 — Activation recomputation

The backward pass needs values the forward pass computed. Whatever it needs is either **stored** — written
to memory in the forward pass, held until the backward pass reads it — or **recomputed** from something
that is stored anyway. In a transformer the stored activations, not the weights, are what fill memory
at long sequences and large batches.

Two elementwise layers with per-column weights (the shape of an MLP's activation, or a norm's affine part;
GELU is puzzle 37's tanh form, `gelu(u) = 0.5 u (1 + t)` with `t = tanh({K:.6f} (u + {A} u^3))`):

```
forward   u1 = x * w1[c] + b1[c]      h  = gelu(u1)
          u2 = h * w2[c] + b2[c]      y  = gelu(u2)
backward  du2 = dy * gelu'(u2)        dh = du2 * w2[c]
          du1 = dh * gelu'(u1)        dx = du1 * w1[c]

gelu'(u) = 0.5 (1 + t) + 0.5 u (1 - t^2) * {K:.6f} (1 + 3 * {A} u^2)
```

The backward pass needs `u1` and `u2`, so it needs `x` and `h`. `x` is the segment's input, kept anyway
(the checkpoint). `h` can be stored in `h_saved` by the forward pass — or rebuilt from `x` in the backward
pass, which needs `t1 = tanh(...)` of `u1` for `gelu'(u1)` anyway: `h` is then two multiplications away.

```
           forward                  kept until backward   backward                   bytes/elem
store      read x, write h_saved, y   x, h_saved (8 B)     read x, h_saved, dy; dx      28
recompute  read x, write y            x          (4 B)     read x, dy; write dx         20
```

(float32; the per-column vectors add a few bytes per column.) Storing costs 8 bytes of traffic and
4 bytes of memory per element to save 3 floating-point operations. For GPT-2 small with 8 x 1024 tokens,
one stored float32 tensor of the MLP's 3072-wide hidden layer is 100 MB per layer, 1.2 GB over 12 layers.
Full recomputation of a whole layer costs a second forward pass (about a third more FLOPs per step) and is
still often worth it; recomputing cheap elementwise work like this costs almost nothing.

**Example:** `x = [[1, -2]]`, `w1 = [0.5, 1.5]`, `b1 = [0.25, 0.5]`, `w2 = [2, -1]`, `b2 = [-0.5, 0]`,
`dy = [[1, 0.5]]` give `u1 = [0.75, -2.5]`, `h = [0.5800, -0.0151]`, `y = [0.4918, 0.0076]` and
`dx = [0.9559, 0.0146]`.

**What's new:** the store-or-recompute trade-off, counted in bytes: the forward pass keeps only what the
backward pass cannot cheaply rebuild.

**Launch:** two kernels, one after the other, each with blocks of {BLOCK[0]} x {BLOCK[1]} threads
(`threadIdx.x` along a row) and grid `(ceil(cols / {BLOCK[0]}), ceil(rows / {BLOCK[1]}))`, one thread per
element, guarded:

* `forward_kernel(x, w1, b1, w2, b2, y, h_saved)` writes `y` (and may write `h_saved`);
* `backward_kernel(x, w1, b1, w2, b2, h_saved, dy, dx)` writes `dx`.

`x, y, h_saved, dy, dx` are float32 `(rows, cols)`, `w1, b1, w2, b2` float32 `(cols,)`. `h_saved` starts as
NaN and is not compared; `y` and `dx` are (rtol 1e-4, atol 1e-5: float32 arithmetic passes easily). Each
thread reads every array at most once and writes at most once per launch. ★ for either strategy;
★★ for recomputing (`h_saved` never touched).

**Read more:** {READING}
"""


def _gelu_parts(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gelu(u) and gelu'(u), in float64."""
    t = np.tanh(K * (u + A * u**3))
    return 0.5 * u * (1.0 + t), 0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * K * (1.0 + 3.0 * A * u * u)


def spec(x, w1, b1, w2, b2, y, h_saved, dy, dx) -> dict[str, np.ndarray]:
    x, w1, b1, w2, b2, dy = (np.asarray(a, dtype=np.float64) for a in (x, w1, b1, w2, b2, dy))
    u1 = x * w1 + b1
    h, dgelu1 = _gelu_parts(u1)
    u2 = h * w2 + b2
    out, dgelu2 = _gelu_parts(u2)
    grad_x = dy * dgelu2 * w2 * dgelu1 * w1
    return {"y": out.astype(np.float32), "dx": grad_x.astype(np.float32)}


def _case(name: str, x, vectors, dy, note: str) -> Case:
    x = np.ascontiguousarray(x, dtype=np.float32)
    dy = np.ascontiguousarray(dy, dtype=np.float32)
    rows, cols = x.shape
    assert dy.shape == x.shape
    buffers = {"x": x}
    for name_, v in zip(VECTORS, vectors):
        buffers[name_] = np.ascontiguousarray(v, dtype=np.float32)
        assert buffers[name_].shape == (cols,)
    buffers.update({
        "y": np.full(x.shape, np.nan, np.float32),
        "h_saved": np.full(x.shape, np.nan, np.float32),
        "dy": dy,
        "dx": np.full(x.shape, np.nan, np.float32),
    })
    grid = ((cols + BLOCK[0] - 1) // BLOCK[0], (rows + BLOCK[1] - 1) // BLOCK[1])
    steps = (
        LaunchStep("forward_kernel", grid, BLOCK, ("x", "w1", "b1", "w2", "b2", "y", "h_saved")),
        LaunchStep("backward_kernel", grid, BLOCK, ("x", "w1", "b1", "w2", "b2", "h_saved", "dy", "dx")),
    )
    return Case(name, buffers, steps, note)


def _random_case(rng: np.random.Generator, name: str, rows: int, cols: int, note: str,
                 spread: float = 1.5) -> Case:
    vectors = (rng.uniform(0.5, 1.5, cols) * rng.choice([-1, 1], cols), rng.uniform(-1, 1, cols),
               rng.uniform(0.5, 2.0, cols) * rng.choice([-1, 1], cols), rng.uniform(-1, 1, cols))
    return _case(name, rng.normal(0, spread, (rows, cols)), vectors, rng.normal(0, 1, (rows, cols)), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(58) if rng is None else rng
    rows, cols = int(rng.choice([5, 6, 7, 9, 10, 11])), 8 * int(rng.choice([5, 7, 9, 11, 13]))  # cols % 32 != 0
    return (
        _case("worked example 1x2", [[1, -2]], ([0.5, 1.5], [0.25, 0.5], [2, -1], [-0.5, 0]), [[1, 0.5]],
              "the example of the description"),
        _random_case(rng, "random 8x64", 8, 64, "full blocks"),
        _random_case(rng, f"random {rows}x{cols}", rows, cols,
                     "rows and columns not multiples of the block: guard both"),
        _random_case(rng, "wide range 4x96", 4, 96, "u from about -10 to 10: both tails of GELU and of its "
                     "derivative", spread=5.0),
        _random_case(rng, "tall 37x8", 37, 8, "more rows than columns: a vector indexed by row runs off its "
                     "end"),
        _case("1x1", [[0.75]], ([-1.25], [0.5], [0.75], [-0.25]), [[2.0]], "a single element"),
    )


def bench(n: int) -> Case:
    rng = np.random.default_rng(58)
    cols = 1024
    return _random_case(rng, f"bench {max(n // cols, 1)}x{cols}", max(n // cols, 1), cols,
                        "graduate-mode timing")


PUZZLE = Puzzle(
    slug="activation-recompute",
    number=58,
    title="Activation recomputation",
    chapter=9,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("forward_kernel", "backward_kernel"),
    spec=spec,
    make_cases=make_cases,
    outputs=("y", "dx"),
    scratch=("h_saved",),   # written by the kernels, not judged
    constraints=(
        *(max_global_reads_per_thread(1, a) for a in ("x", "dy", "h_saved", *VECTORS)),
        *(max_global_writes_per_thread(1, a) for a in ("y", "dx", "h_saved")),
        no_atomics(),
    ),
    stars=(
        Star(2, "recompute: h is rebuilt from x, h_saved never touched — 20 bytes per element instead of 28",
             (max_global_writes_per_thread(0, "h_saved"), max_global_reads_per_thread(0, "h_saved"))),
        Star(3, "coalesced: threadIdx.x walks along a row in both kernels", (ideal_coalescing(),)),
    ),
    hints=(
        "Write one device function that returns `(gelu(u), gelu'(u))` from one `t = math.tanh(...)`; both "
        "kernels and both layers use it.",
        "Forward: `h, _ = gelu_parts(x[r, c] * w1[c] + b1[c])`, then `y[r, c], _ = gelu_parts(h * w2[c] + "
        "b2[c])`. Backward does the same from `x` and keeps both derivatives.",
        "Backward ends with `dx[r, c] = dy[r, c] * d2 * w2[c] * d1 * w1[c]`, where `d1`, `d2` are the "
        "derivatives of the two GELUs. Nothing goes through `h_saved`.",
    ),
    reading=READING,
    rtol=1e-4,
    atol=1e-5,
    bench=bench,
)
