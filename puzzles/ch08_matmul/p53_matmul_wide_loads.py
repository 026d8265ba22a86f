"""Puzzle 53 — Wide loads: four int8 values per 32-bit load; a quarter of the requests for the same sectors.

Why int8 and not float32: numba-cuda has no float4 and no 128-bit integer, so the widest load of a float32
matrix is 8 bytes, through a uint64 view of it. Splitting a word into floats then needs a reinterpretation:
a scalar ``.view(numba.float32)`` (gpusim does not run it), or a uint64 store into dynamic shared memory
read back through an aliased float32 dynamic shared array (valid numba-cuda, and gpusim runs it). But gpusim
keeps race and initialisation records per element size, so those float32 reads are reported as uninitialised
and a missing barrier between the uint64 store and the float32 read would go unseen: the judge could not
be strict. int8 operands packed four to an int32 word need no reinterpretation, and their counted requests
really drop, on gpusim and on a GPU.
"""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_bank_conflicts,
    shared_memory_budget,
)

from .matrices import bench_side, ceil_div, generator
from .rules import sectors_per_request

TILE = 32                      # outputs per block: TILE x TILE, one per thread
WORDS = 32                     # words of k per step: 32 int32 words = 128 int8 values
PER_WORD = 4                   # int8 values per int32 word
ROW_ALIGN = WORDS              # packed rows are padded with zeros to a multiple of 32 words (128 bytes)
BUDGET = 2 * TILE * (WORDS + 1) * 4   # two word tiles, each with one column of padding: 8448 bytes
SENTINEL = np.iinfo(np.int32).min     # no sum of these cases reaches it (|c| <= k * 128 * 128)
K_MAX = 512

READING = ("*How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog* — Simon Boehm, "
           "kernel 6, *Vectorize SMEM and GMEM Accesses*; and *LLM.int8()* (2022) — Dettmers et al., for why "
           "int8 matrices matter")

DESCRIPTION = f"""\
# Puzzle 53 — Wide loads: four int8 values per word

The worklog's next step loads `float4`s: one 128-bit instruction fetches four floats, so a warp issues a
quarter of the load instructions for the same bytes. numba-cuda has no such load, and no 128-bit integer
either. The most it can do for float32 is two at a time: view the matrix as uint64, then turn each word
back into two floats — with a scalar `.view(numba.float32)`, which this simulator does not run yet, or by
storing the word into dynamic shared memory and reading it back through a float32 array at the same
address, which it runs but does not yet track across the two element sizes (it reports the float reads
as uninitialised, and a missing barrier between the two would go unseen). Viewing the matrix as
complex64 does not help: numba loads the two halves separately, `ld.f32` twice. So this puzzle makes the
same move where no reinterpretation is needed: **int8**. Four int8 values fit in one int32 word, and an
int8 GEMM keeps its operands packed that way.

Compute `c = a @ b` **exactly, in integers**, for int8 `a` (`m × k`) and `b` (`k × n`). You get each operand
twice, **the same bytes seen two ways** — in CUDA C you would cast the pointer; numba-cuda cannot, so the
host passes both views:

* `a8[r, q]` (int8) is `a[r, q]`; `a4[r, w]` (int32) holds `a[r, 4w], a[r, 4w+1], a[r, 4w+2], a[r, 4w+3]` —
  lowest byte first;
* `b8[j, q]` is `b[q, j]`: **column** `j` of `b` as a row, and `b4[j, w]` holds `b[4w, j] .. b[4w+3, j]`.
  Both operands are laid out along `k` (a "TN" layout, as int8 tensor-core GEMMs require).
* Each row is padded with zeros to a multiple of {ROW_ALIGN} words (128 bytes), as BLAS libraries pad a
  leading dimension: no k-guard is needed, and every row starts on a sector.

Load from whichever view you like: the answer is the same. The stars are for the loads.

**Example.** `a = [[1, -2, 3, 4]]`, `b` = the column `[5, 6, -7, 8]`: the word `a4[0, 0]` has the bytes
`01 FE 03 04` (from the lowest), so `a4[0, 0] = 0x0403FE01`; `c[0, 0] = 5 - 12 - 21 + 32 = 4`. Unpack byte
`p` of a word `x` with `numba.int32(numba.int8(x >> 8 * p))` — the int8 cast keeps the low byte and its sign.

**Why it counts.** The same 32 × 128 bytes of `a`, loaded by a warp per row:

```
 one int8 per lane:    32 lanes x 1 byte  = 32 bytes   1 sector per request    4 requests per row
 one int32 per lane:   32 lanes x 4 bytes = 128 bytes  4 sectors per request   1 request per row
```

Same sectors, **a quarter of the requests** — and of the shared-memory stores, and of the instructions that
issue them. (A GPU's float4 goes one step further: 16 sectors per request.) A kernel that loads `a8` and `b8`
a byte per thread is correct (★); ★★ wants exactly 4 sectors per load request, with every sector fully
used: the requests are then exactly the bytes over 128.

**Tiles.** A block of {TILE} × {TILE} threads owns a {TILE} × {TILE} tile of `c`. Per step, thread
`(tx, ty)` loads one word of each operand: `sa[ty, tx] = a4[r0 + ty, w0 + tx]` and
`sb[ty, tx] = b4[c0 + ty, w0 + tx]` (0 for rows past the edge). Then it multiplies `sa[ty, w]` with
`sb[tx, w]` for `w = 0..{WORDS - 1}`, four byte products each. `sb[tx, w]` walks *down* the tile: 32 words
32 apart, one bank — pad its rows to {WORDS + 1} words, as in puzzle 17.

**What's new:** more bytes per load instruction, and unpacking them in registers.

**Launch:** blocks of ({TILE}, {TILE}) threads, grid `(ceil(n / {TILE}), ceil(m / {TILE}))`; the kernel gets `a8`,
`a4`, `b8`, `b4`, `c` (int32). Each thread reads each word view at most `k / 128` times and each byte view
at most `k / 32` times (`k <= {K_MAX}`), and writes `c` once; at most {BUDGET} bytes of shared memory.

**Read more:** {READING}
"""


def pack_rows(x: np.ndarray) -> np.ndarray:
    """int8 rows -> int32 words, four values per word (lowest byte first), rows padded to ROW_ALIGN words."""
    x = np.asarray(x, np.int8)
    rows, k = x.shape
    words = max(1, ceil_div(k, PER_WORD * ROW_ALIGN)) * ROW_ALIGN
    padded = np.zeros((rows, words * PER_WORD), np.int8)
    padded[:, :k] = x
    return padded.view("<i4").astype(np.int32)


def unpack_rows(x4: np.ndarray) -> np.ndarray:
    """int32 words -> int8 values, four per word, lowest byte first (the padding comes back as zeros)."""
    return np.ascontiguousarray(x4, "<i4").view(np.int8)


def spec(a8: np.ndarray, a4: np.ndarray, b8: np.ndarray, b4: np.ndarray, c: np.ndarray) -> dict[str, np.ndarray]:
    a, bt = unpack_rows(a4).astype(np.int64), unpack_rows(b4).astype(np.int64)
    return {"c": (a @ bt.T).astype(np.int32)}


def _case(name: str, a: np.ndarray, b: np.ndarray, note: str) -> Case:
    a, b = np.asarray(a, np.int8), np.asarray(b, np.int8)
    (m, k), (k2, n) = a.shape, b.shape
    assert k == k2, (a.shape, b.shape)
    a4, b4 = pack_rows(a), pack_rows(b.T)
    a8, b8 = unpack_rows(a4).copy(), unpack_rows(b4).copy()      # the same bytes, as separate buffers
    c = np.full((m, n), SENTINEL, np.int32)
    grid = (ceil_div(n, TILE), ceil_div(m, TILE))
    step = LaunchStep("matmul_int8_wide", grid=grid, block=(TILE, TILE), args=("a8", "a4", "b8", "b4", "c"))
    return Case(name, {"a8": a8, "a4": a4, "b8": b8, "b4": b4, "c": c}, (step,), note)


def _int8(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Values over the whole int8 range, never 0: a dropped product, a wrong byte or a lost sign shows."""
    v = rng.integers(1, 129, shape) * rng.choice([-1, 1], shape)
    return np.clip(v, -128, 127).astype(np.int8)


def _extremes(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return np.where(rng.random(shape) < 0.5, -128, 127).astype(np.int8)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 53)
    m_random = int(rng.integers(2, 64))
    shapes = [
        ((40, 200, 40), "partial tiles both ways; k = 200 ends inside the second word tile"),
        ((m_random, 128, 64), f"m = {m_random}, drawn at random; one full step of 128 values"),
        ((1, 5, 1), "one output; k = 5 is one word and one byte, the rest padding"),
        ((64, K_MAX, 32), f"k = {K_MAX}: four steps"),
    ]
    cases = [_case("worked example 1x4 @ 4x1", np.array([[1, -2, 3, 4]]), np.array([[5], [6], [-7], [8]]),
                   "the example from the description: c = 4")]
    for (m, k, n), note in shapes:
        cases.append(_case(f"random {m}x{k} @ {k}x{n}", _int8(rng, (m, k)), _int8(rng, (k, n)), note))
    cases.append(_case("extremes 32x256 @ 256x32", _extremes(rng, (32, 256)), _extremes(rng, (256, 32)),
                       "only -128 and 127: the largest products, and a sign lost in unpacking shows"))
    return tuple(cases)


def bench(n: int) -> Case:
    """Graduate mode: a square int8 matmul with about ``n`` outputs and k = the side."""
    side = bench_side(n, TILE * 4)
    rng = np.random.default_rng(53)
    return _case(f"bench {side}x{side} @ {side}x{side}", _int8(rng, (side, side)), _int8(rng, (side, side)),
                 "graduate mode")


PUZZLE = Puzzle(
    slug="matmul-wide-loads",
    number=53,
    title="Wide loads: four int8 per word",
    chapter=8,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("matmul_int8_wide",),
    spec=spec,
    make_cases=make_cases,
    outputs=("c",),
    constraints=(
        must_use_shared(),
        shared_memory_budget(BUDGET),
        max_global_reads_per_thread(K_MAX // (WORDS * PER_WORD), "a4"),
        max_global_reads_per_thread(K_MAX // (WORDS * PER_WORD), "b4"),
        max_global_reads_per_thread(K_MAX // TILE, "a8"),
        max_global_reads_per_thread(K_MAX // TILE, "b8"),
        max_global_writes_per_thread(1, "c"),
    ),
    stars=(
        Star(2, "wide, coalesced loads: exactly 4 sectors per load request (one int32 word per lane); "
                "coalesced stores",
             (sectors_per_request(4), ideal_coalescing())),
        Star(3, "no shared-memory bank conflicts", (no_bank_conflicts(),)),
    ),
    hints=(
        "Load the word views, `a4` and `b4`: one word of each per thread per step, exactly as puzzle 14 loads "
        "floats. The new part is the inner loop, which turns two words into four products.",
        "`x = sa[ty, w]`, `y = sb[tx, w]`; for `p in range(4)`: `acc += numba.int32(numba.int8(x >> 8 * p)) * "
        "numba.int32(numba.int8(y >> 8 * p))`. Declare `sb` as `(TILE, WORDS + 1)`.",
        "`for w0 in range(0, a4.shape[1], WORDS):` load `sa[ty, tx] = a4[r0 + ty, w0 + tx] if r0 + ty < m "
        "else 0` and the same for `sb` from `b4[c0 + ty, w0 + tx]`; barrier; the word loop; barrier. At the "
        "end `c[r0 + ty, c0 + tx] = acc` inside the matrix.",
    ),
    reading=READING,
    bench=bench,
)
