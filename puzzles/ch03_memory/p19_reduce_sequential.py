"""Puzzle 19 — Sequential-addressing reduction: a block sum with busy warps and no bank conflicts."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Rule, RunStats, Star
from puzzles.rules import (
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
    shared_memory_budget,
)

TPB = 128                      # threads per block = elements per block
BLOCKS = 4                     # the launch is always 4 blocks; n <= BLOCKS * TPB
WARPS = TPB // 32
SHARED_STORES = "smsp__sass_inst_executed_op_shared_st.sum"
STORES_PER_BLOCK = 16          # warp-level shared stores a block may issue for ★★ (the tree itself needs 12)

READING = "*GPU Glossary* — Modal: the entries *Warp Divergence* and *Bank Conflict*"

DESCRIPTION = f"""\
# Puzzle 19 — Reduce with sequential addressing

Each block sums its {TPB} elements of `a` into one number: `out[b] = a[b*{TPB}] + ... + a[b*{TPB} + {TPB - 1}]`
(elements past `n` count as 0). Load the block's elements into shared memory, then halve the number of
partial sums each step until one is left:

```
interleaved (the first idea)             sequential (this puzzle)
step s=1: t%2==0  does x[t] += x[t+1]    step s=64: t<64 does x[t] += x[t+64]
step s=2: t%4==0  does x[t] += x[t+2]    step s=32: t<32 does x[t] += x[t+32]
...                                      ...
step s=64: t==0   does x[0] += x[64]     step s=1:  t==0 does x[0] += x[1]
```

Both do the same additions. They differ in *which* threads work:

- **Interleaved, `if t % (2*s) == 0`**: at `s = 1` every other lane works, so all {WARPS} warps are busy with
  half their lanes idle; at `s = 16` all {WARPS} warps still issue the instruction for 2 working lanes each.
  A warp pays for an instruction if even one lane needs it — that is **warp divergence**.
- **Interleaved, `j = 2*s*t; if j < {TPB}`**: packs the workers into the first lanes (no divergence), but lane
  `t` touches word `2*s*t`: a stride of 2, 4, 8... words, so several lanes of a warp hit one bank —
  **bank conflicts**.
- **Sequential, `if t < s`, partner `t + s`**: the workers are lanes `0..s-1` — whole warps retire as `s`
  shrinks — and consecutive lanes touch consecutive words: no conflicts.

**Example** with blocks of 8 (yours have {TPB}): `a = [3, 1, -2, 5, 0, 4, -1, 2]`; `s=4`:
`[3, 5, -3, 7]`; `s=2`: `[0, 12]`; `s=1`: `[12]`, so `out[0] = 12`.

On an H200, a reduction of 2^26 floats with 256-thread blocks and one element per thread took: interleaved
with `%` 540 µs, interleaved with strided index 355-365 µs, sequential 334-347 µs.

**What's new:** counting the cost of a shared-memory tree: warp instructions (divergence) and bank
conflicts. The checker counts *warp-level* shared-memory stores: the tree needs {WARPS} (loading) + 8 (the
steps: 2 warps at `s=64`, then one warp per step); ★★ allows {STORES_PER_BLOCK} per block.

**Launch:** always {BLOCKS} blocks of {TPB} threads; `n` is at most {BLOCKS * TPB}, so a block may be partial or
empty (its sum is 0). Each thread reads `a` at most once; one thread per block writes `out[b]`. Use
`cuda.syncthreads()` after every step, and at most {TPB * 4} bytes of shared memory.

**Read more:** {READING}
"""


def spec(a: np.ndarray, out: np.ndarray, n: int) -> dict[str, np.ndarray]:
    padded = np.zeros(BLOCKS * TPB, np.float64)
    padded[:n] = a
    return {"out": padded.reshape(BLOCKS, TPB).sum(axis=1).astype(np.float32)}


def _case(name: str, a, note: str) -> Case:
    a = np.asarray(a, dtype=np.float32)
    out = np.full(BLOCKS, np.nan, np.float32)
    step = LaunchStep("block_sum", grid=BLOCKS, block=TPB, args=("a", "out", "n"))
    return Case(name, {"a": a, "out": out, "n": int(a.size)}, (step,), note)


def _nonzero(rng: np.random.Generator, n: int) -> np.ndarray:
    """Integers in [-50, 50] without 0: sums are exact in float32 and every dropped term shows."""
    return rng.integers(1, 51, n) * rng.choice([-1, 1], n)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 19)
    n = size(rng, 257, 383)
    return (
        _case("worked example n=8", [3, 1, -2, 5, 0, 4, -1, 2],
              "the example from the description; blocks 1-3 are empty and must write 0"),
        _case("n=1", [-17], "one element: 127 zero pads in block 0, three empty blocks"),
        _case("random n=100", _nonzero(rng, 100), "block 0 partial, blocks 1-3 empty"),
        _case("random n=128", _nonzero(rng, 128), "block 0 exactly full"),
        _case(f"random n={n}", _nonzero(rng, n), f"blocks 0 and 1 full, block 2 has {n - 256} elements, block 3 none"),
        _case("random n=512", _nonzero(rng, 512), "all four blocks full"),
    )


def busy_warps(per_block: int = STORES_PER_BLOCK) -> Rule:
    """Warp-level shared-memory stores per launch: a divergent tree makes every warp issue every step."""
    limit = per_block * BLOCKS

    def check(s: RunStats) -> str | None:
        if SHARED_STORES not in s.metrics:
            return "the simulator did not report warp-level shared-memory stores"
        got = int(s.metrics[SHARED_STORES])
        if got > limit * s.launches:
            return (f"the blocks issue {got} warp-level shared-memory stores, {got / BLOCKS:.0f} per block, "
                    f"where {per_block} will do: warps whose lanes mostly sit idle still issue every step")
        return None

    return Rule(f"no divergent warps: at most {per_block} warp-level shared stores per block", check)


PUZZLE = Puzzle(
    slug="reduce-sequential",
    number=19,
    title="Reduce with sequential addressing",
    chapter=3,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("block_sum",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        must_use_shared(),
        shared_memory_budget(TPB * 4),
        max_global_reads_per_thread(1, "a"),
        max_global_writes_per_thread(1, "out"),
        no_atomics(),
    ),
    stars=(
        Star(2, "no divergent warps: the working lanes are packed into as few warps as possible",
             (busy_warps(),)),
        Star(3, "no bank conflicts: consecutive lanes touch consecutive words", (no_bank_conflicts(),)),
    ),
    hints=(
        "Store your element (or 0 past `n`) in `x[t]` of a shared array of TPB floats, then "
        "`cuda.syncthreads()`. Now halve: who adds what at each step so that the workers are lanes 0, 1, "
        "2, ... ?",
        "`s = TPB // 2`; `while s > 0:` — threads `t < s` do `x[t] += x[t + s]`; then every thread (not "
        "only the workers) calls `cuda.syncthreads()`; `s //= 2`.",
        "After the loop `x[0]` holds the block's sum: `if t == 0: out[cuda.blockIdx.x] = x[0]`. Empty "
        "blocks run the same code and write 0.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
BENCH_NOTE = "the launch is fixed at 4 blocks of 128 threads (the spec sums exactly four blocks): timed at n = 512"


def bench_max() -> Case:
    """The largest valid launch: all four blocks full."""
    a = np.random.default_rng(8019).integers(-50, 51, BLOCKS * TPB)
    return _case(f"bench: n={BLOCKS * TPB}", a, "the largest valid launch")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench_max": bench_max, "bench_note": BENCH_NOTE}))
