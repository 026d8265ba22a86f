"""Puzzle 48 — Coalesced naive matmul: which thread gets which output decides the sectors of every load."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import max_global_reads_per_thread, max_global_writes_per_thread, no_shared

from .matrices import ceil_div, generator, matmul_buffers, random_cases, spec, square_bench
from .rules import float32_only, sectors_per_request

TPB = 256            # threads per block, one output element per thread, a 1-D launch
K_MAX = 128          # the longest inner dimension of any case

READING = ("*How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog* — Simon Boehm, "
           "kernels 1 and 2, *Naive Implementation* and *Global Memory Coalescing*")

DESCRIPTION = f"""\
# Puzzle 48 — Coalesced naive matmul

Multiply `a` (`m × k`) by `b` (`k × n`) into `c` (`m × n`), all float32, one thread per element of `c`:

    c[r, j] = a[r, 0]*b[0, j] + a[r, 1]*b[1, j] + ... + a[r, k-1]*b[k-1, j]

**Example.** `a = [[1, 2, 3], [4, 5, 6]]` and a `3 × 32` matrix `b[q, j] = j - q` give
`c[0, j] = 1*j + 2*(j-1) + 3*(j-2) = 6j - 8` and `c[1, j] = 15j - 17`: `c[0, :3] = [-8, -2, 4]`.

The launch is one-dimensional, so *you* decide which output thread `t` computes — and that decides what
every load of the inner loop costs. Take the 32 threads of one warp at step `q` of the loop:

```
  row-major: r, j = t // n, t % n              column-major: r, j = t % m, t // m
  the warp computes c[r, j..j+31]              the warp computes c[r..r+31, j]

  a[r, q]        one word, broadcast   1 sector   a[r..r+31, q]  32 rows apart  32 sectors
  b[q, j..j+31]  128 bytes in a row    4 sectors  b[q, j]        one word        1 sector
                                       ---------                                ----------
                 per step              5 sectors                                33 sectors
  store c        128 bytes in a row    4 sectors  store c        a column       32 sectors
```

A sector is an aligned 32-byte piece of memory: the unit a warp's load actually moves. Row-major moves
**2.5 sectors per load request** and 4 per store; column-major 16.5 and 32 — six times the traffic for the
same FLOPs. (In every case `n` is a multiple of 32, so a warp never straddles two rows and these counts
are exact.) On a GPU the caches catch part of the waste: the worklog measured 309 GFLOP/s for the
column-major kernel and 1,987 GFLOP/s for the row-major one (RTX A6000, 4096 × 4096). Puzzle 16 met this
choice in a transpose, where either way one side was strided; here one mapping wins on every access.

**Mind the type.** In numba `acc = 0.0` is a float64, and then every `acc += a[r, q] * b[q, j]` is a
float64 add. cuBLAS's SGEMM accumulates in float32; start from `acc = numba.float32(0.0)`. (Every value in
the cases is a multiple of 1/8, so float32 sums are exact and the checker compares bit for bit.)

**What's new:** the thread-to-output mapping of a matmul, judged by the exact sectors per request: a
broadcast costs one sector, a warp-wide row four.

**Launch:** blocks of {TPB} threads, `ceil(m * n / {TPB})` blocks; the last block has spare threads. The
kernel gets `a`, `b`, `c` (sizes from `a.shape` and `b.shape`). No shared memory yet; each thread reads
`a` and `b` at most `k` times (`k <= {K_MAX}`) and writes `c` once.

**Read more:** {READING}
"""


def _case(name: str, a, b, note: str) -> Case:
    buffers = matmul_buffers(a, b)
    m, n = buffers["c"].shape
    assert n % 32 == 0, "a warp must not straddle two rows of c: the exact counts depend on it"
    step = LaunchStep("matmul_naive", grid=ceil_div(m * n, TPB), block=TPB, args=("a", "b", "c"))
    return Case(name, buffers, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 48)
    m_random = int(rng.integers(2, 40))
    shapes = [
        ((37, 33, 32), "m * n = 1184: the last block has 160 threads with work and 96 without; k odd"),
        ((1, 100, 96), "one row: every warp reads the same a[0, q]"),
        ((m_random, 24, 64), f"m = {m_random}, drawn at random; two warps per row of c"),
        ((50, 1, 64), "k = 1: one product per output"),
        ((96, 16, 160), "tall and wide: 60 blocks"),
        ((128, K_MAX, 128), f"the longest loop, k = {K_MAX}: 64 blocks, exact counts judged here too"),
    ]
    assert all(k <= K_MAX for (_, k, _), _ in shapes)
    example = _case("worked example 2x3 @ 3x32", np.array([[1, 2, 3], [4, 5, 6]]),
                    np.arange(32)[None, :] - np.arange(3)[:, None],
                    "the example from the description: c[0, j] = 6j - 8, c[1, j] = 15j - 17")
    return random_cases(rng, example, shapes, _case)


def bench(n: int) -> Case:
    """Graduate mode: a square matmul with about ``n`` outputs (k = the side), one thread per output."""
    return square_bench(_case, n, 32, 48)


PUZZLE = Puzzle(
    slug="matmul-coalesced",
    number=48,
    title="Coalesced naive matmul",
    chapter=8,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("matmul_naive",),
    spec=spec,
    make_cases=make_cases,
    outputs=("c",),
    constraints=(
        no_shared("this is the step before tiling: every operand comes straight from global memory"),
        max_global_reads_per_thread(K_MAX, "a"),
        max_global_reads_per_thread(K_MAX, "b"),
        max_global_writes_per_thread(1, "c"),
    ),
    stars=(
        Star(2, "coalesced: a broadcast from `a` (1 sector) and a warp-wide row of `b` and `c` (4 sectors)",
             (sectors_per_request(2.5, 4),)),
        Star(3, "float32 accumulator, as cuBLAS's SGEMM", (float32_only(),)),
    ),
    hints=(
        "Which index should change fastest between neighbouring threads: the row of `c` or its column? "
        "Rows are contiguous in memory.",
        "`t = cuda.grid(1)`; guard `t < m * n`; `r = t // n`, `j = t % n`; then loop over `q` in "
        "`range(k)` adding `a[r, q] * b[q, j]` into a register, and store once.",
        "`m, k = a.shape`; `n = b.shape[1]`; `acc = numba.float32(0.0)`; "
        "`for q in range(k): acc += a[r, q] * b[q, j]`; `c[r, j] = acc`.",
    ),
    reading=READING,
    rtol=0.0,        # exact: every case's values are multiples of 1/8 (see matrices.py)
    atol=0.0,
    bench=bench,
)
