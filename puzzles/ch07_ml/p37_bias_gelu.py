"""Puzzle 37 — Bias + GELU, fused: one read and one write per element instead of a round trip in between."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    no_atomics,
)

BLOCK = (32, 4)          # 32 columns (one warp) x 4 rows per block
SQRT_2_OVER_PI = 0.7978845608028654

READING = ("*Making Deep Learning Go Brrrr From First Principles* — Horace He: the sections on "
           "memory bandwidth and operator fusion")

DESCRIPTION = f"""\
# Puzzle 37 — Bias + GELU, fused

After a linear layer, a transformer MLP adds a bias and applies GELU. Using the tanh approximation of GELU
(GPT-2's, and PyTorch's `approximate="tanh"`):

    z         = x[r, c] + bias[c]
    out[r, c] = 0.5 * z * (1 + tanh( sqrt(2/pi) * (z + 0.044715 * z^3) ))

**Example:** `x = [[-1.5, 0.0, 2.0]]`, `bias = [0.5, -0.25, 1.0]` gives `z = [-1, -0.25, 3]` and
`out = [-0.1588, -0.1003, 2.9964]`.

Computing this is almost free; moving it is not. Done as two PyTorch ops it costs two kernels and a
temporary tensor:

```
unfused:  kernel 1   read x (4 B), write tmp = x + bias (4 B)
          kernel 2   read tmp (4 B), write out = gelu(tmp) (4 B)          16 bytes per element
fused:    one kernel read x (4 B), keep z in a register, write out (4 B)    8 bytes per element
```

For a memory-bound op, half the bytes is about half the time. (`bias` has one value per column, shared
by every row: it costs next to nothing once cached.)

**What's new:** fusion as a way to save memory traffic — the intermediate `z` lives in a register, never in
global memory — and a 2D launch over a matrix.

**Launch:** blocks of {BLOCK[0]} x {BLOCK[1]} threads (`threadIdx.x` runs along a row, `threadIdx.y` picks the
row), grid `(ceil(cols / {BLOCK[0]}), ceil(rows / {BLOCK[1]}))`; one thread per element, guarded on both
dimensions. `x`, `out` float32 `(rows, cols)`, `bias` float32 `(cols,)`. Each thread may read `x` and `bias`
at most twice and write `out` at most twice (room for an unfused round trip); ★★ is the fused kernel: one
read of each input, one write and no reads of `out`. Use the tanh form above, not the exact `erf` GELU: the
two differ by up to about 5e-4, far more than the tolerance (rtol 1e-5, atol 1e-6).

**Read more:** {READING}
"""


def _gelu_tanh(z: np.ndarray) -> np.ndarray:
    return 0.5 * z * (1.0 + np.tanh(SQRT_2_OVER_PI * (z + 0.044715 * z**3)))


def spec(x: np.ndarray, bias: np.ndarray, out: np.ndarray) -> dict[str, np.ndarray]:
    z = x.astype(np.float64) + bias.astype(np.float64)
    return {"out": _gelu_tanh(z).astype(np.float32)}


def _case(name: str, x: np.ndarray, bias: np.ndarray, note: str) -> Case:
    x = np.asarray(x, dtype=np.float32)
    bias = np.asarray(bias, dtype=np.float32)
    rows, cols = x.shape
    assert bias.shape == (cols,)
    out = np.full(x.shape, np.nan, dtype=np.float32)
    grid = ((cols + BLOCK[0] - 1) // BLOCK[0], (rows + BLOCK[1] - 1) // BLOCK[1])
    step = LaunchStep("bias_gelu_kernel", grid=grid, block=BLOCK, args=("x", "bias", "out"))
    return Case(name, {"x": x, "bias": bias, "out": out}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 37)
    rows, cols = size(rng, 5, 15, not_multiple_of=4), size(rng, 40, 88, multiple_of=8, not_multiple_of=32)
    return (
        _case("worked example 1x3", [[-1.5, 0.0, 2.0]], [0.5, -0.25, 1.0],
              "the example from the description"),
        _case("random 8x64", rng.normal(0, 2, (8, 64)), rng.uniform(-1, 1, 64), "full blocks"),
        _case(f"random {rows}x{cols}", rng.normal(0, 2, (rows, cols)), rng.uniform(-1, 1, cols),
              "neither dimension a multiple of the block: guard rows and columns"),
        _case("wide range 4x96", rng.uniform(-8, 8, (4, 96)), np.linspace(-3, 3, 96),
              "z from -11 to 11: GELU is ~0 on the left and ~z on the right; z^3 is large"),
        _case("1x1", [[0.75]], [-2.0], "a single element"),
        _case("tall 37x8", rng.normal(0, 1.5, (37, 8)), rng.uniform(-2, 2, 8),
              "more rows than columns: a bias indexed by row instead of column reads past its end"),
    )


PUZZLE = Puzzle(
    slug="bias-gelu",
    number=37,
    title="Bias + GELU, fused",
    chapter=7,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("bias_gelu_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(2, "x"),
        max_global_reads_per_thread(2, "bias"),
        max_global_writes_per_thread(2, "out"),
        no_atomics(),
    ),
    stars=(
        Star(2, "fused: x and bias read once, out written once and never read back", (
            max_global_reads_per_thread(1, "x"),
            max_global_reads_per_thread(1, "bias"),
            max_global_writes_per_thread(1, "out"),
            max_global_reads_per_thread(0, "out"),
        )),
        Star(3, "coalesced: threadIdx.x walks along a row", (ideal_coalescing(),)),
    ),
    hints=(
        "`c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x` is the column and the same with `.y` is "
        "the row; return early unless `r < rows and c < cols`.",
        "Keep `z = x[r, c] + bias[c]` in a local variable; compute `inner = SQRT_2_OVER_PI * (z + 0.044715 * "
        "z * z * z)` and `math.tanh(inner)`.",
        "Write once: `out[r, c] = 0.5 * z * (1.0 + math.tanh(inner))`.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-6,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n elements: rows of 4,096 columns (fewer when n is small)."""
    rng = np.random.default_rng(8037)
    cols = min(4096, n)
    x = rng.standard_normal((max(1, n // cols), cols), dtype=np.float32) * np.float32(2)
    return _case(f"bench {x.shape[0]}x{cols}", x, rng.uniform(-1, 1, cols), "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
