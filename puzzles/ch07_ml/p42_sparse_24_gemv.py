"""Puzzle 42 — 2:4 sparse GEMV: y = W x where W keeps 2 of every 4 weights, stored compressed."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
)

TPB_X = 32               # threads along a row (one warp per row)
ROWS = 4                 # rows per block: the block is (TPB_X, ROWS)
K_MAX = 128              # the longest row among the cases: x fits in shared memory
THREADS = TPB_X * ROWS   # 128: enough threads to stage x with one read each

READING = ("*Accelerating Sparse Deep Neural Networks* (2021) — Mishra et al. (NVIDIA's 2:4 structured "
           "sparsity), and the PyTorch tutorial *Accelerating BERT with semi-structured (2:4) sparsity*")

DESCRIPTION = f"""\
# Puzzle 42 — 2:4 sparse GEMV

*2:4 structured sparsity* prunes a weight matrix so that in **every group of 4 consecutive weights of a
row, at most 2 are non-zero**. The zeros are not stored: a row of K weights becomes K/2 `values` plus, for
each group, the positions of its two kept weights. Two positions (0..3) fit in 2 bits each, so one byte of
`meta` describes one group:

    meta[r, g] = i0 | (i1 << 2)      with 0 <= i0 < i1 <= 3
    values[r, 2g] sits at column 4g + i0,  values[r, 2g + 1] at column 4g + i1

Compute `y = W x` from the compressed form (`W` is never built).

**Example.** One row of `W` with K = 8, and `x = [1, 2, 3, 4, 5, 6, 7, 8]`:

```
W row:      [ 0   2   0  -1 |  3   0  0.5  0 ]
groups:       g = 0           g = 1
kept at:      i0=1, i1=3      i0=0, i1=2
values:     [ 2, -1,            3, 0.5 ]
meta:       [ 1 | 3<<2 = 13,    0 | 2<<2 = 8 ]
y = 2*x[1] + -1*x[3] + 3*x[4] + 0.5*x[6] = 4 - 4 + 15 + 3.5 = 18.5
```

Half the weights, plus one byte of `meta` per group of 4: per weight of `W` that is 2 + 0.25 bytes instead
of 4 (NVIDIA's hardware format packs the same 4 bits per group without the spare nibble). A GEMV is
limited by memory traffic, so it gets almost twice as fast. The catch is that `x` is now read at
data-dependent positions (a *gather*).

**What's new:** decoding 2-bit indices and gathering from `x` through them. Because every row of the
block gathers from the same `x`, load it **once per block into shared memory** (coalesced) and gather
from there.

```
block (32 x {ROWS} threads):  all {THREADS} threads copy x -> xs (shared), then sync
  threadIdx.y = 0 -> row 4b + 0:  thread tx takes values tx, tx+32, ...  -> partial sums -> tree sum
  threadIdx.y = 1 -> row 4b + 1:  ...
```

**Launch:** `ceil(rows / {ROWS})` blocks of `({TPB_X}, {ROWS})` threads; row `blockIdx.x * {ROWS} +
threadIdx.y`. The number of rows is not always a multiple of {ROWS}: threads of a missing row still help
load `x` and still reach every `cuda.syncthreads()`. K is a multiple of 4, at most {K_MAX}. Write each
`y[r]` once. ★★: `x` staged in shared memory, at most 1 read of `x` per thread. ★★★: coalesced — thread
`tx` takes kept value `tx` (then `tx + 32`, ...) so neighbouring threads read neighbouring `values` and
`meta` bytes.

**Read more:** {READING}
"""


def decompress(values: np.ndarray, meta: np.ndarray) -> np.ndarray:
    """The dense (rows, K) matrix described by ``values`` (rows, K/2) and ``meta`` (rows, K/4)."""
    rows, groups = meta.shape
    i0 = (meta & 3).astype(np.int64)
    i1 = ((meta >> 2) & 3).astype(np.int64)
    w = np.zeros((rows, 4 * groups), dtype=np.float64)
    base = 4 * np.arange(groups)[None, :]
    r = np.arange(rows)[:, None]
    w[r, base + i0] = values[:, 0::2]
    w[r, base + i1] = values[:, 1::2]
    return w


def spec(values: np.ndarray, meta: np.ndarray, x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    return {"y": (decompress(values, meta) @ x.astype(np.float64)).astype(np.float32)}


PAIRS = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]   # the six ways to keep 2 of 4


def _case(name: str, values: np.ndarray, meta: np.ndarray, x: np.ndarray, note: str) -> Case:
    rows, groups = meta.shape
    assert values.shape == (rows, 2 * groups) and x.shape == (4 * groups,) and 4 * groups <= K_MAX
    buffers = {
        "values": np.asarray(values, dtype=np.float32),
        "meta": np.asarray(meta, dtype=np.uint8),
        "x": np.asarray(x, dtype=np.float32),
        "y": np.full(rows, np.nan, dtype=np.float32),
    }
    step = LaunchStep("sparse24_gemv", grid=(rows + ROWS - 1) // ROWS, block=(TPB_X, ROWS),
                      args=("values", "meta", "x", "y"))
    return Case(name, buffers, (step,), note)


def _random(rng: np.random.Generator, name: str, rows: int, k: int, note: str) -> Case:
    groups = k // 4
    pairs = np.array(PAIRS)[rng.integers(0, 6, (rows, groups))]
    meta = pairs[..., 0] | (pairs[..., 1] << 2)
    values = rng.uniform(0.2, 2.0, (rows, 2 * groups)) * rng.choice([-1, 1], (rows, 2 * groups))
    # x: distinct, non-zero, mixed signs, so picking the wrong column of a group changes the sum
    x = rng.permutation(np.linspace(0.25, 4.0, k)) * rng.choice([-1, 1], k)
    return _case(name, values, meta, x, note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 42)
    rows = size(rng, 33, 47, not_multiple_of=4)
    return (
        _case("worked example, 1 row, K=8", np.array([[2.0, -1.0, 3.0, 0.5]]), np.array([[13, 8]]),
              np.arange(1, 9), "the example from the description"),
        _random(rng, "random 40 rows, K=128", 40, 128, "64 kept values per row: two per thread"),
        _random(rng, f"{rows} rows, K=64", rows, 64, f"{rows} is not a multiple of 4: the last block has "
                f"{rows % 4} real rows and {4 - rows % 4} empty ones whose threads must still load x and "
                "reach the barriers"),
        _random(rng, "one row, K=128", 1, 128, "a single row: three quarters of the block has no row"),
        _random(rng, "6 rows, K=32", 6, 32, "16 kept values per row: half of each warp is idle"),
        _random(rng, "3 rows, K=4", 3, 4, "one group per row"),
    )


PUZZLE = Puzzle(
    slug="sparse-24-gemv",
    number=42,
    title="2:4 sparse GEMV",
    chapter=7,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("sparse24_gemv",),
    spec=spec,
    make_cases=make_cases,
    outputs=("y",),
    constraints=(max_global_writes_per_thread(1, "y"),),
    stars=(
        Star(2, "x is staged once per block in shared memory: at most 1 read of x per thread",
             (must_use_shared(), max_global_reads_per_thread(1, "x"))),
        Star(3, "coalesced: neighbouring threads read neighbouring kept values", (ideal_coalescing(),)),
    ),
    hints=(
        "Kept value j of a row belongs to group g = j // 2; it is the first of its pair when j is even. Its "
        "position in the group is `(meta[row, g] >> (2 * (j % 2))) & 3`, so its column is `4 * g + pos`.",
        "First copy x into `xs = cuda.shared.array(K_MAX, numba.float32)` with all 128 threads "
        "(`tid = ty * 32 + tx`, `for k in range(tid, K, 128)`), then `cuda.syncthreads()`. Every thread, "
        "even one whose row does not exist, must reach that barrier.",
        "Sum `values[row, j] * xs[4 * g + pos]` over j = tx, tx + 32, ... into a register (0 for a missing "
        "row), store it in `partial[ty, tx]` (a (4, 32) shared array), tree-reduce along tx with a barrier "
        "after each step, and let tx == 0 write `y[row]` if the row exists.",
    ),
    reading=READING,
    rtol=1e-4,
    atol=1e-4,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n dense weights (half of them stored): rows of K_MAX (x must fit in shared memory)."""
    return _random(np.random.default_rng(8042), f"bench {max(1, n // K_MAX)} rows, K={K_MAX}",
                   max(1, n // K_MAX), K_MAX, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
