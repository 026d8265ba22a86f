"""Puzzle 14 — Matmul: tiled matrix multiply with shared tiles, sizes not multiples of the tile."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_bank_conflicts,
    shared_memory_budget,
)

TILE = 16                       # the block is TILE x TILE threads; the shared tiles are TILE x TILE
MAX_K = 40                      # the longest inner dimension of any test case
MAX_READS = -(-MAX_K // TILE)   # 3: one element of each tile of a (and of b) per thread
SHARED_BUDGET = 2 * TILE * (TILE + 1) * 4   # two float32 tiles, with room for one column of padding

READING = ("*How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog* — Simon Boehm, "
           "kernel 3, *Shared Memory Cache-Blocking*")

DESCRIPTION = f"""\
# Puzzle 14 — Matmul

Multiply an `m × k` matrix `a` by a `k × n` matrix `b`:

    out[r, c] = a[r, 0]*b[0, c] + a[r, 1]*b[1, c] + ... + a[r, k-1]*b[k-1, c]

**Example.** `a = [[1, 2, 3], [4, 5, 6]]`, `b = [[1, 2], [0, 1], [-1, 3]]` give
`out = [[-2, 13], [-2, 31]]` (`out[0, 1] = 1*2 + 2*1 + 3*3`).

Computed naively, every thread reads a whole row of `a` and a whole column of `b`: `2k` global reads for
`2k` flops, and each element of `a` is fetched `n` times over. Tiling fixes that. Each block owns a
{TILE} × {TILE} tile of `out` and walks along `k` one tile at a time:

```
                         b
                   +-----------+
                   |    B0     |   step 0: load A0 and B0 into shared memory (1 element each per thread)
                   |    B1     |           barrier; every thread adds {TILE} products from shared memory
                   |    B2     |           barrier (before the next load overwrites the tiles)
                   +-----------+   step 1: A1, B1 ...
   a
+------------+     +-----------+
| A0 | A1 |A2|     |  out tile |   out tile = A0·B0 + A1·B1 + A2·B2
+------------+     +-----------+
```

Now each value loaded from global memory is used {TILE} times. Tiles that hang over an edge of a matrix are
filled with **zeros** in shared memory (a zero adds nothing to the sum), and only threads inside `out` write.

**What's new:** 2-D tiles, a loop with *two* barriers per step (after loading; and before the next load
overwrites what slower threads may still be reading), and the payoff: global traffic divided by the tile
width. Threads at the edges must still reach every barrier, so don't skip the loop for them — guard only
the loads and the final write.

**Launch:** blocks of {TILE} × {TILE} threads (x = column, y = row), a grid of
`(ceil(n / {TILE}), ceil(m / {TILE}))`; `m`, `k`, `n` are passed to the kernel (`k <= {MAX_K}`).
Per thread: at most {MAX_READS} reads of `a`, {MAX_READS} of `b`, 1 write; shared memory at most
{SHARED_BUDGET} bytes per block.

**Read more:** {READING}
"""


def spec(out: np.ndarray, a: np.ndarray, b: np.ndarray, m: int, k: int, n: int) -> dict[str, np.ndarray]:
    return {"out": (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)}


def _case(name: str, a: np.ndarray, b: np.ndarray, note: str = "") -> Case:
    a, b = np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32)
    (m, k), (k2, n) = a.shape, b.shape
    assert k == k2 and k <= MAX_K
    out = np.full((m, n), np.nan, dtype=np.float32)
    grid = (-(-n // TILE), -(-m // TILE))
    step = LaunchStep("matmul_kernel", grid=grid, block=(TILE, TILE), args=("out", "a", "b", "m", "k", "n"))
    return Case(name, {"out": out, "a": a, "b": b, "m": int(m), "k": int(k), "n": int(n)}, (step,), note)


def _nonzero(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Values of magnitude 0.5..2 with random signs: a dropped or doubled product always shows."""
    return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 14)
    odd = (size(rng, 17, 31), size(rng, 33, MAX_K, not_multiple_of=TILE), size(rng, 17, 31))
    mats = [(17, 9, 12), odd, (16, 16, 16), (30, 40, 10), (5, 40, 3)]
    notes = {
        (17, 9, 12): "k shorter than a tile; one row past a tile edge",
        odd: "three k-steps, the last one partial; fits no tile either way",
        (16, 16, 16): "everything fits exactly: one block, one k-step",
        (30, 40, 10): "tall: two blocks stacked; three k-steps",
        (5, 40, 3): "a thin output with a long inner dimension",
    }
    cases = [_case("worked example 2x3 @ 3x2", np.array([[1, 2, 3], [4, 5, 6]]),
                   np.array([[1, 2], [0, 1], [-1, 3]]), "the example from the description")]
    for m, k, n in mats:
        cases.append(_case(f"random {m}x{k} @ {k}x{n}", _nonzero(rng, (m, k)), _nonzero(rng, (k, n)),
                           notes[(m, k, n)]))
    cases.append(_case("1x1 @ 1x1", np.array([[3.0]]), np.array([[-0.5]]), "one element: 255 idle threads"))
    return tuple(cases)


PUZZLE = Puzzle(
    slug="matmul",
    number=14,
    title="Matmul",
    chapter=2,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("matmul_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        must_use_shared(),
        max_global_reads_per_thread(MAX_READS, "a"),
        max_global_reads_per_thread(MAX_READS, "b"),
        max_global_writes_per_thread(1, "out"),
        shared_memory_budget(SHARED_BUDGET),
    ),
    stars=(
        # Rows of 33 or 40 floats are not 32-byte aligned, so the right loads move up to ~1.25x the ideal
        # sectors here; loading the tiles transposed (threadIdx.x walking down a column) moves 2.3-3.7x.
        Star(2, "coalesced tile loads: threadIdx.x walks along a row", (ideal_coalescing(2.0),)),
        Star(3, "no shared-memory bank conflicts", (no_bank_conflicts(),)),
    ),
    hints=(
        "Each thread owns one element of `out`: `c = blockIdx.x * TILE + threadIdx.x`, "
        "`r = blockIdx.y * TILE + threadIdx.y`. Loop over the k-tiles: `for t0 in range(0, k, TILE)`.",
        "In each step thread (tx, ty) loads `sa[ty, tx] = a[r, t0 + tx]` and `sb[ty, tx] = b[t0 + ty, c]` "
        "(0.0 where the index is outside the matrix), `cuda.syncthreads()`, then "
        "`for j in range(TILE): acc += sa[ty, j] * sb[j, tx]`, then `cuda.syncthreads()` again.",
        "`sa = cuda.shared.array((TILE, TILE), numba.float32)` (same for `sb`); `acc = 0.0` before the loop; "
        "after it, `if r < m and c < n: out[r, c] = acc`.",
    ),
    reading=READING,
    # float32 sums of up to 40 products of size <= 4, in any order; a wrong term moves a sum by >= 0.25
    rtol=1e-5,
    atol=5e-4,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n multiply-adds: square m = n_cols with the longest inner dimension the puzzle allows, k = MAX_K."""
    side = max(1, int((n / MAX_K) ** 0.5))
    rng = np.random.default_rng(8014)
    a = rng.standard_normal((side, MAX_K), dtype=np.float32)
    b = rng.standard_normal((MAX_K, side), dtype=np.float32)
    return _case(f"bench {side}x{MAX_K} @ {MAX_K}x{side}", a, b)


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
