"""Puzzle 41 — Int4 GEMV: y = W x with 4-bit weights packed two per byte, dequantised on the fly."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread

TPB = 32                 # threads per block; one block per row of W
GROUP = 16               # weights per quantisation group (one scale and one zero point each)
K_MAX = 128              # the longest row among the cases
ROW_READS = K_MAX // TPB     # reads of each array per thread when the block shares the row
COALESCING_SLACK = 1.1   # rows of 24 bytes (K = 48) do not all start on a 32-byte sector boundary

READING = ("*A Visual Guide to Quantization* — Maarten Grootendorst, sections on asymmetric (zero-point) "
           "quantisation and GPTQ/4-bit blocks; *LLM.int8()* and Tim Dettmers on quantisation")

DESCRIPTION = f"""\
# Puzzle 41 — Int4 GEMV

During decoding, a language model multiplies each weight matrix by **one** vector: `y = W x`. That is all
memory traffic and almost no arithmetic, so the way to go faster is to move fewer bytes: store each
weight in **4 bits**. Two weights share one byte:

```
w_packed[r, j]  (uint8):   bits 7 6 5 4 | 3 2 1 0
                             q[r, 2j+1]  |  q[r, 2j]        low nibble = even k, high nibble = odd k
```

A 4-bit code `q` (0..15) becomes a real weight through its **group**: every {GROUP} consecutive weights of a
row share one `scale` (float32) and one `zero` point (uint8, 0..15):

    w[r, k] = (q[r, k] - zeros[r, k // {GROUP}]) * scales[r, k // {GROUP}]
    y[r]    = sum over k of w[r, k] * x[k]

**Example** (a toy row of 4 weights and one group of 4; the puzzle's groups hold {GROUP}):
`w_packed = [0x3A, 0xF0]`, `zeros = [8]`, `scales = [0.5]`, `x = [1, 2, 3, 4]`.

```
0x3A -> low nibble 0xA = 10 (k=0), high nibble 0x3 = 3 (k=1)
0xF0 -> low nibble 0x0 =  0 (k=2), high nibble 0xF = 15 (k=3)
w = [(10-8)*0.5, (3-8)*0.5, (0-8)*0.5, (15-8)*0.5] = [1.0, -2.5, -4.0, 3.5]
y = 1.0*1 + -2.5*2 + -4.0*3 + 3.5*4 = -2.0
```

Never build the float matrix: decode each weight in registers right before you use it — that is what
keeps the traffic at half a byte per weight.

**What's new:** bit unpacking (`(byte >> 4) & 0xF`, `byte & 0xF`) and group-wise dequantisation inside a
GEMV. The row sum itself is a block reduction (puzzles 10 and 13).

**Launch:** one block of {TPB} threads per row (`grid = rows`). K is a multiple of {GROUP}, at most {K_MAX},
and is not always a multiple of {TPB}. Thread 0 (or any one thread) writes `y[r]` once.
★★: the block shares the row — each thread reads at most {ROW_READS} bytes of `w_packed` (and of `x`,
`scales`, `zeros`). ★★★: coalesced — in each step the 32 threads take 32 *consecutive weights*
(`k = t, t + {TPB}, ...`); two neighbouring threads then read the same byte, one the low and one the high
nibble, and the loads of `x` are contiguous too. (One byte per thread, with its two weights, reads `x` at a
stride of 2 and moves about 1.7 times the ideal number of sectors; the star allows {COALESCING_SLACK:g} times,
because rows of 24 bytes do not all start on a 32-byte sector.)

**Read more:** {READING}
"""


def unpack(w_packed: np.ndarray) -> np.ndarray:
    """(rows, K/2) uint8 -> (rows, K) codes 0..15: low nibble first."""
    q = np.empty((w_packed.shape[0], 2 * w_packed.shape[1]), dtype=np.int64)
    q[:, 0::2] = w_packed & 0xF
    q[:, 1::2] = w_packed >> 4
    return q


def spec(w_packed: np.ndarray, scales: np.ndarray, zeros: np.ndarray, x: np.ndarray,
         y: np.ndarray) -> dict[str, np.ndarray]:
    q = unpack(w_packed)
    group = q.shape[1] // scales.shape[1]
    w = (q - np.repeat(zeros.astype(np.int64), group, axis=1)) * np.repeat(scales.astype(np.float64), group,
                                                                           axis=1)
    return {"y": (w @ x.astype(np.float64)).astype(np.float32)}


def pack(q: np.ndarray) -> np.ndarray:
    """(rows, K) codes 0..15 -> (rows, K/2) uint8, low nibble = even k."""
    q = np.asarray(q, dtype=np.uint8)
    return (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)


def _case(name: str, q: np.ndarray, zeros: np.ndarray, scales: np.ndarray, x: np.ndarray, note: str) -> Case:
    rows, k = q.shape
    assert k % GROUP == 0 and k <= K_MAX and zeros.shape == scales.shape == (rows, k // GROUP)
    buffers = {
        "w_packed": pack(q),
        "scales": np.asarray(scales, dtype=np.float32),
        "zeros": np.asarray(zeros, dtype=np.uint8),
        "x": np.asarray(x, dtype=np.float32),
        "y": np.full(rows, np.nan, dtype=np.float32),
    }
    step = LaunchStep("int4_gemv", grid=rows, block=TPB, args=("w_packed", "scales", "zeros", "x", "y"))
    return Case(name, buffers, (step,), note)


def _random(rng: np.random.Generator, name: str, rows: int, k: int, note: str) -> Case:
    groups = k // GROUP
    q = rng.integers(0, 16, (rows, k))
    zeros = rng.integers(5, 11, (rows, groups))
    # scales differ by up to 10x between groups of a row, so a wrong group index shows
    scales = 10.0 ** rng.uniform(-2, -1, (rows, groups))
    x = rng.normal(0, 1, k)
    return _case(name, q, zeros, scales, x, note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 41)
    rows, k = 9, 64
    extreme_q = rng.choice(np.array([0, 15]), (rows, k))
    extreme_zeros = rng.choice(np.array([0, 15]), (rows, k // GROUP))
    extreme_scales = 10.0 ** rng.uniform(-2, 0, (rows, k // GROUP))
    rows = size(rng, 17, 47)
    return (
        _random(rng, "random 40 rows, K=128", 40, 128, "four passes of 32 weights per row"),
        _random(rng, "one row, K=64", 1, 64, "a single block"),
        _random(rng, f"{rows} rows, K=48", rows, 48, "K is not a multiple of 32: in the second pass only 16 threads "
                "have a weight"),
        _random(rng, "5 rows, K=16", 5, 16, "one group, fewer weights than threads"),
        _case("extreme codes, 9 rows, K=64", extreme_q, extreme_zeros, extreme_scales,
              rng.normal(0, 1, k), "codes and zero points only 0 or 15: a swapped nibble or a dropped zero "
              "point changes every weight by 15 steps"),
    )


PUZZLE = Puzzle(
    slug="int4-gemv",
    number=41,
    title="Int4 GEMV",
    chapter=7,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("int4_gemv",),
    spec=spec,
    make_cases=make_cases,
    outputs=("y",),
    constraints=(max_global_writes_per_thread(1, "y"),),
    stars=(
        Star(2, f"the block shares each row: at most {ROW_READS} reads of each input array per thread",
             tuple(max_global_reads_per_thread(ROW_READS, a) for a in ("w_packed", "x", "scales", "zeros"))),
        Star(3, "coalesced: neighbouring threads take neighbouring weights",
             (ideal_coalescing(COALESCING_SLACK),)),
    ),
    hints=(
        "Give thread t the weights k = t, t + 32, t + 64, ... of its block's row. Weight k lives in byte "
        "k // 2, in the low nibble when k is even and the high nibble when k is odd.",
        "`q = (w_packed[row, k // 2] >> (4 * (k % 2))) & 0xF`, then "
        "`w = (numba.float32(q) - numba.float32(zeros[row, g])) * scales[row, g]` with `g = k // GROUP`. "
        "Sum `w * x[k]` in a float32 register.",
        "Put each thread's partial sum in a shared array of 32 floats, `cuda.syncthreads()`, halve a stride "
        "from 16 down to 1 (`if t < stride: s[t] += s[t + stride]`, then a barrier), and let thread 0 "
        "write `y[row] = s[0]`.",
    ),
    reading=READING,
    rtol=1e-4,
    atol=1e-4,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n weights: rows of K_MAX (the longest the puzzle allows), one block per row."""
    return _random(np.random.default_rng(8041), f"bench {max(1, n // K_MAX)} rows, K={K_MAX}",
                   max(1, n // K_MAX), K_MAX, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
