"""Puzzle 78 — LLM.int8(): find the outlier feature columns, quantise the rest of each row to int8, and
multiply with exact integer sums plus a small floating-point matmul for the outliers."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import max_global_reads_per_thread, max_global_writes_per_thread, max_launches, no_atomics

from .int8 import clear_of_ties

THRESHOLD = 6.0          # LLM.int8's alpha: a column with any |x| >= 6 is an outlier feature
SCAN_TPB = 64            # find_outliers: one thread per column
ROW_TPB = 64             # quantize_rows: one block per row
TILE = 16                # int8_outlier_matmul: TILE x TILE threads, TILE x TILE shared tiles
K_MAX = 128
TILE_READS = K_MAX // TILE        # 8 reads of x_q and of w_q per thread when staged through shared tiles
Q_MAX = 127
FLAG_SENTINEL = -7
INT8_SENTINEL = -128     # symmetric quantisation never produces it

READING = ("*LLM.int8(): 8-bit Matrix Multiplication for Transformers at Scale* (2022) — Dettmers et al., "
           "section 3 (vector-wise quantisation and the mixed-precision decomposition)")

DESCRIPTION = f"""\
# Puzzle 78 — LLM.int8(): outlier decomposition

Puzzle 40 multiplied int8 matrices with one scale per row of `x`. That breaks on large language models:
past a few billion parameters, a handful of **feature columns** of the activations carry values of 20, 40,
60 while the rest stay near 1. One such value in a row makes that row's scale huge, and every ordinary
value of the row rounds to -1, 0 or 1. LLM.int8() splits the matmul in two:

```
x (M x K)                    w (K x N, int8 + a scale per column)
+---+--+--------+            columns of x with any |x| >= {THRESHOLD:g}: the OUTLIERS (here column 1)
|   |##|        |            y = int8 part (every other column, exact integer sums)
|   |##|        |              + float part (outlier columns of x, times the same rows of w)
+---+--+--------+
```

Three launches:

1. `find_outliers`: `outlier[k] = 1` if some row has `|x[m, k]| >= {THRESHOLD:g}`, else 0 (int32).
2. `quantize_rows`: for row `m`, `amax` = the largest `|x[m, k]|` over the columns that are **not**
   outliers; `x_scale[m] = amax / {Q_MAX}` (float32); `x_q[m, k] = round(x[m, k] / x_scale[m])` (int8) for
   ordinary columns, and **0 in outlier columns** (they go the other way). If `amax = 0`, the scale and
   the row of `x_q` are 0.
3. `int8_outlier_matmul`:

       y[m, n] = ( sum over k of x_q[m, k] * w_q[k, n] ) * x_scale[m] * w_scale[n]     (int32 sum)
               + ( sum over outlier k of x[m, k] * w_q[k, n] ) * w_scale[n]            (float32 sum)

   The weights are int8 everywhere; for the outlier columns they are dequantised (`w_q * w_scale`), as
   bitsandbytes does.

**Example:** `x = [[0.3, -8.0, 1.0, 0.2], [-1.0, 2.0, -0.6, 0.8]]`: column 1 holds -8, so it is an outlier
column — for **both** rows (a column is an outlier feature, not a single value). Row 0 without column 1:
`amax = 1.0`, `x_scale = 1/127`, `x_q = [38, 0, 127, 25]` (0.3 * 127 = 38.1, 0.2 * 127 = 25.4). Row 1:
`amax = 1.0`, `x_q = [-127, 0, -76, 102]`. With `w_q = [[10, -20], [5, 3], [-7, 8], [12, 0]]` and
`w_scale = [0.01, 0.02]`:

```
y[0, 0] = (38*10 + 127*(-7) + 25*12) * (1/127) * 0.01  +  (-8.0 * 5) * 0.01
        = -209 / 127 * 0.01 - 0.4 = -0.41646
```

`round` is Python's (halves to even), computed in float32 exactly as written (`x / x_scale`); no case
puts a quotient within 2^-12 of a half, so `x * 127 / amax` and the like round the same.

**What's new:** a decomposition by feature — a cheap detector, then two matmuls over the same `k` loop: an
exact int8 one for nearly every column and a float one for the few that would wreck its scales.

**Launch:** `find_outliers` on `ceil(K/{SCAN_TPB})` blocks of {SCAN_TPB} threads (thread = column);
`quantize_rows` on `M` blocks of {ROW_TPB} threads; `int8_outlier_matmul` on `(ceil(N/{TILE}), ceil(M/{TILE}))`
blocks of `({TILE}, {TILE})` threads (`x` = column `n`, `y` = row `m`). `K <= {K_MAX}`. Rules: each output element
written once; no atomics. ★★: stage `x_q`, `w_q` (and the outlier values of `x`) through shared tiles — at
most {TILE_READS} reads of `x_q` and of `w_q` per thread.

**Read more:** {READING}
"""


def decompose(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(outlier flags, x_scale, x_q) exactly as the description says, in float32."""
    x = np.asarray(x, dtype=np.float32)
    outlier = (np.abs(x) >= np.float32(THRESHOLD)).any(axis=0)
    rest = np.where(outlier[None, :], np.float32(0), x)
    amax = np.abs(rest).max(axis=1)
    scale = (amax / np.float32(Q_MAX)).astype(np.float32)
    safe = np.where(scale == 0, np.float32(1), scale)[:, None]
    q = np.where((scale[:, None] == 0) | outlier[None, :], 0, np.rint(rest / safe))
    return outlier.astype(np.int32), scale, q.astype(np.int8)


def spec(x: np.ndarray, w_q: np.ndarray, w_scale: np.ndarray, outlier: np.ndarray, x_scale: np.ndarray,
         x_q: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    flags, sx, q = decompose(x)
    integer = q.astype(np.int64) @ w_q.astype(np.int64)                    # exact
    float_part = np.where(flags[None, :] == 1, x, 0).astype(np.float64) @ w_q.astype(np.float64)
    sw = w_scale.astype(np.float64)
    out = integer * sx.astype(np.float64)[:, None] * sw[None, :] + float_part * sw[None, :]
    return {"outlier": flags, "x_scale": sx, "x_q": q, "y": out.astype(np.float32)}


def quantize_weights(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise absmax int8 (done once, offline, for the weights)."""
    scale = (np.abs(w).max(axis=0) / Q_MAX).astype(np.float32)
    return np.clip(np.rint(w / scale), -Q_MAX, Q_MAX).astype(np.int8), scale


def _case(name: str, x: np.ndarray, w_q: np.ndarray, w_scale: np.ndarray, note: str) -> Case:
    """A case; every value of an ordinary column is kept off the int8 rounding ties (``int8.clear_of_ties``)."""
    x = np.asarray(x, dtype=np.float32)
    ordinary = decompose(x)[0][None, :] == 0
    x = clear_of_ties(x, np.abs(np.where(ordinary, x, 0)).max(axis=1, keepdims=True), Q_MAX, quantised=ordinary)
    m, k = x.shape
    n = w_q.shape[1]
    assert k <= K_MAX and w_q.shape[0] == k
    buffers = {
        "x": x,
        "w_q": np.asarray(w_q, dtype=np.int8),
        "w_scale": np.asarray(w_scale, dtype=np.float32),
        "outlier": np.full(k, FLAG_SENTINEL, dtype=np.int32),
        "x_scale": np.full(m, np.nan, dtype=np.float32),
        "x_q": np.full((m, k), INT8_SENTINEL, dtype=np.int8),
        "y": np.full((m, n), np.nan, dtype=np.float32),
    }
    steps = (
        LaunchStep("find_outliers", grid=(k + SCAN_TPB - 1) // SCAN_TPB, block=SCAN_TPB, args=("x", "outlier")),
        LaunchStep("quantize_rows", grid=m, block=ROW_TPB, args=("x", "outlier", "x_q", "x_scale")),
        LaunchStep("int8_outlier_matmul", grid=((n + TILE - 1) // TILE, (m + TILE - 1) // TILE), block=(TILE, TILE),
                   args=("x", "x_q", "x_scale", "outlier", "w_q", "w_scale", "y")),
    )
    return Case(name, buffers, steps, note)


def _activations(rng: np.random.Generator, m: int, k: int, outlier_cols: list[int]) -> np.ndarray:
    """Ordinary features below the threshold; in each outlier column a few rows with large values."""
    x = np.clip(rng.normal(0, 1, (m, k)), -5.5, 5.5)
    for c in outlier_cols:
        rows = rng.choice(m, max(1, m // 4), replace=False)
        x[rows, c] = rng.uniform(10, 60, rows.size) * rng.choice([-1, 1], rows.size)
    return x.astype(np.float32)


def _random(rng: np.random.Generator, name: str, m: int, k: int, n: int, outliers: int, note: str,
            x: np.ndarray | None = None) -> Case:
    cols = sorted(rng.choice(k, outliers, replace=False).tolist())
    x = _activations(rng, m, k, cols) if x is None else x
    w_q, w_scale = quantize_weights(rng.normal(0, 0.1, (k, n)))
    return _case(name, x, w_q, w_scale, note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(78) if rng is None else rng
    example = _case("worked example 2x4x2", [[0.3, -8.0, 1.0, 0.2], [-1.0, 2.0, -0.6, 0.8]],
                    np.array([[10, -20], [5, 3], [-7, 8], [12, 0]]), np.array([0.01, 0.02]),
                    "the description's example: column 1 is an outlier column for both rows")
    edge = _activations(rng, 9, 100, [3, 50])
    edge[:, 7] = np.clip(edge[:, 7], -5, 5)
    edge[4, 7] = -THRESHOLD                     # exactly at the threshold: an outlier (|x| >= 6)
    edge[:, 8] = np.clip(edge[:, 8], -5, 5)
    edge[2, 8] = np.nextafter(np.float32(THRESHOLD), np.float32(0))   # just below: not an outlier
    edge[6] = 0.0
    edge[6, 3] = 25.0                           # a row that is zero outside the outlier columns
    extreme = np.where(rng.random((40, 128)) < 0.5, -5.9, 5.9).astype(np.float32)
    extreme[0] = 5.9                            # every value +-amax: x_q = +-127; row 0 all +127
    w_ext = np.where(rng.random((128, 40)) < 0.5, -Q_MAX, Q_MAX).astype(np.int8)
    w_ext[:, 0] = Q_MAX
    tail = np.clip(rng.normal(0, 1, (6, 17)), -5, 5).astype(np.float32)
    tail[5, 2] = 7.5                            # column 2's only outlier is in the last row
    tail[0, 16] = 5.8                           # row 0's largest ordinary |x| is in the last column
    return (
        example,
        _random(rng, "random M=37 K=128 N=40, 3 outlier columns", 37, 128, 40, 3,
                "outlier columns hold values of 10-60 in a quarter of the rows"),
        _random(rng, "no outliers M=20 K=64 N=24", 20, 64, 24, 0, "every |x| < 6: a plain int8 matmul",
                x=np.clip(rng.normal(0, 1.5, (20, 64)), -5.9, 5.9).astype(np.float32)),
        _random(rng, "threshold and zero row M=9 K=100 N=17", 9, 100, 17, 0,
                "a column whose largest |x| is exactly 6 (an outlier), one just below 6 (not), and a row "
                "that is 0 except in outlier columns (scale 0); K = 100 ends inside a tile", x=edge),
        _case("extreme values M=40 K=128 N=40", extreme, w_ext, np.full(40, 0.001, np.float32),
              "x_q and w_q all +-127; row 0 of x_q and column 0 of w_q all +127: the integer sum "
              "y[0, 0] is 128 * 127 * 127 = 2,064,512, far past int16"),
        _case("last row, last column M=6 K=17 N=9", tail, *quantize_weights(rng.normal(0, 0.1, (17, 9))),
              "column 2's one outlier is in the last row, row 0's amax in the last column, and K = 17 leaves "
              "a last tile of k 1 deep: a loop that stops one short misses each"),
    )


def bench(n: int) -> Case:
    """About n multiply-adds: an M x 128 by 128 x M product with M = sqrt(n / 128), 4 outlier columns."""
    size = max(TILE, int((n / K_MAX) ** 0.5))
    rng = np.random.default_rng(78)
    return _random(rng, f"bench {size}x{K_MAX}x{size}", size, K_MAX, size, 4, "graduate-mode timing")


PUZZLE = Puzzle(
    slug="llm-int8",
    number=78,
    title="LLM.int8(): outlier decomposition",
    chapter=11,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("find_outliers", "quantize_rows", "int8_outlier_matmul"),
    spec=spec,
    make_cases=make_cases,
    outputs=("outlier", "x_scale", "x_q", "y"),
    constraints=(
        max_global_writes_per_thread(1, "outlier"),
        max_global_writes_per_thread(1, "x_scale"),
        max_global_writes_per_thread(K_MAX // ROW_TPB, "x_q"),
        max_global_writes_per_thread(1, "y"),
        max_launches(3),
        no_atomics(),
    ),
    stars=(
        Star(2, f"shared tiles: at most {TILE_READS} reads of x_q and of w_q per thread",
             (max_global_reads_per_thread(TILE_READS, "x_q"), max_global_reads_per_thread(TILE_READS, "w_q"))),
    ),
    hints=(
        "find_outliers: thread k walks down column k: `if abs(x[m, k]) >= THRESHOLD: flag = 1`. "
        "quantize_rows: threads stride over the row (`for k in range(t, K, ROW_TPB)`) skipping outlier "
        "columns, then a block max in shared memory; `scale = amax / numba.float32(127)`.",
        "Still in quantize_rows: `x_q[m, k] = round(x[m, k] / scale)` for ordinary columns, 0 for outlier "
        "columns and when scale is 0. Thread 0 writes `x_scale[m]`.",
        "The matmul is puzzle 40's tiling with a third tile: `xo[ty, tx] = x[row, k] if outlier[k] else 0` "
        "(float32). Per k: `acc += numba.int32(a[ty, kk]) * numba.int32(b[kk, tx])` and "
        "`acc_f += xo[ty, kk] * b[kk, tx]`. At the end "
        "`y = acc * x_scale[row] * w_scale[col] + acc_f * w_scale[col]`.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-5,
    bench=bench,
)
