"""Puzzle 55 — Split-K: cut k into S slices for S times the blocks, then add the S partial products in a second
launch, in a fixed order."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_writes_per_thread,
    max_launches,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
    shared_memory_budget,
)

from .matrices import bench_side, ceil_div, eighths, generator
from .rules import MIN_FLOPS, float32_only, load_intensity

TILE = 32                        # puzzle 49's tiles: 32 x 32 outputs per block, k-slices 16 deep
BK = 16
BUDGET = 2 * TILE * BK * 4       # 4096 bytes
TPB = 256                        # the sum launch: one thread per element of c
S_MAX = 8
INTENSITY = 7.0                  # 8 FLOPs per byte in the tiles, less the workspace (see the description)
TOLERANCE = 0.01                 # see ``PUZZLE.atol`` below

READING = ("*Efficient GEMM in CUDA* — the CUTLASS documentation, section *Parallelized Reductions* "
           "(split-K); and *What Every Computer Scientist Should Know About Floating-Point Arithmetic* — "
           "David Goldberg, on why the order of a sum changes its bits")

DESCRIPTION = f"""\
# Puzzle 55 — Split-K

`c = a @ b` for a **small, deep** problem: `c` is 32 × 32 but `k` is 1024. Tiled as in puzzle 49 that
is one block, and an H200 has 132 SMs: 131 of them idle. **Split-K** cuts `k` into `S` slices, gives each
slice its own blocks, and adds the `S` partial products afterwards:

```
 launch 1: grid (ceil(n/32), ceil(m/32), S)              launch 2: one thread per element of c
   block (x, y, z) multiplies slice z of k:                c[r, j] = part[0, r, j] + part[1, r, j]
   part[z] = a[:, z*L : (z+1)*L] @ b[z*L : (z+1)*L, :]             + ... + part[S-1, r, j]
   L = slice_k, a multiple of 16; the last slices may be short, or empty
```

**Example.** `a = [[1, 1, ..., 1], [1, -1, 1, -1, ...]]` (2 × 32), `b[q, 0] = q`, `b[q, 1] = 1`, `S = 2`,
`slice_k = 16`: `part[0] = [[120, 16], [-8, 0]]`, `part[1] = [[376, 16], [-8, 0]]`, so
`c = [[496, 32], [-16, 0]]`.

**What it costs.** The workspace `part` is written once and read once: `2·S·m·n·4` extra bytes. With
`m = n = 32`, `k = 1024`, `S = 8` the tiles load 256 KiB (8 FLOPs per byte, as in puzzle 49) and the
workspace adds 32 KiB of reads: **7.1 FLOPs per byte loaded** over both launches. Worth it when the
blocks would otherwise idle; cuBLAS picks `S` from the shape.

**What it does to the numbers.** A float32 sum depends on the order of its additions. Split-K adds each
slice's products in a chain of `L`, then the `S` partials: a different order from one long chain of `k`,
so on real data the last bits differ from an unsplit kernel's (both are right to within rounding; the
shorter chains even lower the worst-case error, from about `k·u` to `(L + S)·u` times the sum of |products|,
`u = 2^-24`). Adding the partials with `cuda.atomic.add` into `c` would save the second launch, but the
order in which blocks arrive changes from run to run, and with it the bits: the same inputs would give
different outputs. This puzzle wants them reproducible: no atomics, partials added in order `z = 0, 1, ...`.
One case uses real-valued data; the checker allows {TOLERANCE} there (every product of these cases is at least
0.25, and for `k = 1024` values of size at most 1 the rounding error stays below 0.009).

**What's new:** trading extra traffic for parallelism, and a reduction whose order is fixed on purpose.

**Launch:** 1. `matmul_partial(a, b, part, slice_k)`: blocks of ({TILE}, {TILE}) threads, grid
`(ceil(n / {TILE}), ceil(m / {TILE}), S)`; `part` is `S × m × n` float32 (filled with NaN: every element must
be written, zeros for an empty slice). 2. `sum_slices(part, c)`: blocks of {TPB} threads, `ceil(m * n / {TPB})`
blocks. No atomics; float32; at most {BUDGET} bytes of shared memory; `S <= {S_MAX}`. The intensity is judged on
cases of at least {MIN_FLOPS:,} FLOPs.

**Read more:** {READING}
"""


def spec(a: np.ndarray, b: np.ndarray, part: np.ndarray, c: np.ndarray, slice_k: int) -> dict[str, np.ndarray]:
    return {"c": (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)}


def _case(name: str, a: np.ndarray, b: np.ndarray, slices: int, note: str) -> Case:
    a, b = np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32)
    (m, k), (k2, n) = a.shape, b.shape
    assert k == k2 and 1 <= slices <= S_MAX, (a.shape, b.shape, slices)
    slice_k = ceil_div(ceil_div(k, slices), BK) * BK
    buffers = {"a": a, "b": b, "part": np.full((slices, m, n), np.nan, np.float32),
               "c": np.full((m, n), np.nan, np.float32), "slice_k": int(slice_k)}
    partial = LaunchStep("matmul_partial", grid=(ceil_div(n, TILE), ceil_div(m, TILE), slices),
                         block=(TILE, TILE), args=("a", "b", "part", "slice_k"))
    total = LaunchStep("sum_slices", grid=ceil_div(m * n, TPB), block=TPB, args=("part", "c"))
    return Case(name, buffers, (partial, total), note)


def _real(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Real-valued float32 data of magnitude 0.5..1 with random signs: sums that round."""
    return (rng.uniform(0.5, 1.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(np.float32)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 55)
    q = np.arange(32)
    example_a = np.stack([np.ones(32), np.where(q % 2 == 0, 1.0, -1.0)])
    example_b = np.stack([q, np.ones(32)], axis=1)
    m_random = int(rng.integers(2, 40))
    cases = [
        _case("worked example 2x32 @ 32x2, S=2", example_a, example_b, 2,
              "the example from the description: part[0] = [[120, 16], [-8, 0]], part[1] = [[376, 16], [-8, 0]]"),
        _case("random 40x200 @ 200x24, S=4", eighths(rng, (40, 200)), eighths(rng, (200, 24)), 4,
              "slice_k = 64: the last slice is 8 deep; partial tiles both ways"),
        _case(f"random {m_random}x40 @ 40x32, S=4", eighths(rng, (m_random, 40)), eighths(rng, (40, 32)), 4,
              f"m = {m_random}, drawn at random; slice_k = 16, so slice 3 is empty and must write zeros"),
        _case("random 1x64 @ 64x8, S=4", eighths(rng, (1, 64)), eighths(rng, (64, 8)), 4, "one row"),
        _case("random 24x1 @ 1x40, S=4", eighths(rng, (24, 1)), eighths(rng, (1, 40)), 4,
              "k = 1: slice 0 is 1 deep, the other three are empty"),
        _case("random 32x1024 @ 1024x32, S=8", eighths(rng, (32, 1024)), eighths(rng, (1024, 32)), 8,
              "deep: 8 slices of 128 turn 1 block into 8 (exact values; intensity judged)"),
        _case("real-valued 32x1024 @ 1024x32, S=8", _real(rng, (32, 1024)), _real(rng, (1024, 32)), 8,
              f"values that round: compared within {TOLERANCE}, not bit for bit"),
    ]
    return tuple(cases)


def bench(n: int) -> Case:
    """Graduate mode: about ``n`` outputs, k = 4096 in 8 slices. Split-K pays off for small outputs; at large
    ones the same launch shows what the workspace costs."""
    side = bench_side(n, TILE)
    rng = np.random.default_rng(55)
    k = 4096
    return _case(f"bench {side}x{k} @ {k}x{side}, S=8", eighths(rng, (side, k)), eighths(rng, (k, side)), 8,
                 "graduate mode")


PUZZLE = Puzzle(
    slug="matmul-split-k",
    number=55,
    title="Split-K",
    chapter=8,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("matmul_partial", "sum_slices"),
    spec=spec,
    make_cases=make_cases,
    outputs=("c",),
    scratch=("part",),   # written by the kernels, not judged
    constraints=(
        must_use_shared(),
        shared_memory_budget(BUDGET),
        no_atomics(),
        max_launches(2),
        float32_only(),
        max_global_writes_per_thread(1, "part"),
        max_global_writes_per_thread(1, "c"),
    ),
    stars=(
        Star(2, "coalesced: the workspace written and read in rows", (ideal_coalescing(),)),
        Star(3, f"at least {INTENSITY:g} FLOPs per byte loaded over both launches, no bank conflicts",
             (load_intensity(INTENSITY), no_bank_conflicts())),
    ),
    hints=(
        "Launch 1 is puzzle 49's kernel restricted to `k0` in `[z * slice_k, min(k, (z + 1) * slice_k))` with "
        "`z = cuda.blockIdx.z`; it stores its tile to `part[z]` instead of `c`. Launch 2 adds `part[0..S-1]`.",
        "In launch 1 loop `for k0 in range(lo, hi, BK)` and guard the loads with `k0 + q < hi`, the end of this "
        "block's slice. An empty slice's loop runs zero times, and the block still stores its zeros.",
        "Launch 2: `t = cuda.grid(1)`; if `t < m * n`: `r, j = t // n, t % n`; "
        "`acc = numba.float32(0.0)`; `for z in range(part.shape[0]): acc += part[z, r, j]`; `c[r, j] = acc`.",
    ),
    reading=READING,
    # Every product of these cases is at least 0.25 in size, so a dropped or doubled one moves c by >= 0.25.
    # The real-valued case (k = 1024, |values| <= 1) adds chains of slice_k = 128 products and then 8 partials:
    # its float32 error is at most about (128 + 8) * 2^-24 * 1024 = 0.0083 (Higham's bound), below 0.01.
    rtol=0.0,
    atol=TOLERANCE,
    bench=bench,
)
