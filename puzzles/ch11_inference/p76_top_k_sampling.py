"""Puzzle 76 — Top-k sampling: sort a row of logits in shared memory with a bitonic network, then draw
from the k best with a given uniform."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_atomics,
    shared_memory_budget,
)

from .rules import max_shared_loads_per_row
from .sampling import draw, uniform_for, uniforms_for

V_MAX = 1024             # the largest vocabulary among the cases: the sort's size
TPB = 512                # threads per block: one compare-and-swap each per step
K_MAX = 32               # the largest k: one warp samples
ROWS = 8                 # every case is a batch of 8 requests
SENTINEL = -7
SHARED_BUDGET = V_MAX * 8                     # a value and an index for every slot of the sort
BITONIC_STEPS = 55                            # log2(1024) * (log2(1024) + 1) / 2
BITONIC_LOADS = BITONIC_STEPS * (TPB // 32) * 4   # 3,520 per row: 2 values and 2 indices per thread per step
WORK_BUDGET = 2 * BITONIC_LOADS

READING = ("*The Curious Case of Neural Text Degeneration* (2019) — Holtzman et al. (why sampling is "
           "truncated to the likely tokens); and *GPU Gems 2*, ch. 46, *Improved GPU Sorting* (bitonic sort)")

DESCRIPTION = f"""\
# Puzzle 76 — Top-k sampling

The model's last layer gives a row of **logits**, one per vocabulary entry. Greedy decoding takes the
largest; sampling from the whole softmax now and then picks an absurd token from the long tail. **Top-k
sampling** keeps only the `k` largest logits and samples among them:

1. sort the row by logit, largest first; **equal logits: the lower token id first**;
2. keep the first `k`: `topk_ids[b, 0..k-1]` (the other {K_MAX} - k entries of the row are -1);
3. weights `w_j = exp((logit_j - logit_0) / temperature)` for `j < k` (subtracting the largest keeps exp
   in range), running sums `c_j = w_0 + ... + w_j`;
4. with the given uniform `u` in [0, 1): the token is `topk_ids[b, j]` for the **first** `j` with
   `c_j > u * c_(k-1)`.

Randomness is an input, so the answer is exact; the cases keep `u * c_(k-1)` at least 0.1% of the total
away from every `c_j`, so float32 rounding cannot change the draw.

**Example:** logits `[1, 3, 2, 3, -1, 0.5, -2, 0]`, `k = 3`, temperature 1, `u = 0.6`. Sorted: ids
`[1, 3, 2, 0, 5, 7, 4, 6]` (ids 1 and 3 tie at 3: id 1 first). Kept: `[1, 3, 2]`, weights
`[1, 1, e^-1 = 0.368]`, running sums `[1, 2, 2.368]`; `u * 2.368 = 1.421`, and the first sum above it is
`c_1 = 2`: **token 3**.

**A bitonic sort** works on a power-of-two array in steps; in every step each thread compares one pair
`(i, i + j)` and swaps it if it is out of order, and a barrier separates the steps:

```
for size = 2, 4, ..., {V_MAX}:                     pair of thread t in a step (j = stride):
    for j = size/2, size/4, ..., 1:                    i = 2*j*(t // j) + t % j,   partner i + j
        thread t: compare (i, i+j); the pair           descending if (i & size) == 0, else ascending
        must end descending if (i & size) == 0     j = 4:  t 0..3 -> i 0..3, t 4..7 -> i 8..11, ...
        syncthreads()
```

Pad the row to {V_MAX} with `-inf` (ids `V..{V_MAX - 1}`, so they sort last). After
{BITONIC_STEPS} steps the row is sorted; then one warp samples: lane `j < k` has `w_j`, an inclusive scan with
`cuda.shfl_up_sync` gives `c_j`, `cuda.ballot_sync` + `cuda.ffs` finds the first `c_j > u * c_(k-1)` (as in
puzzle 46).

**What's new:** a sorting network in shared memory — data-independent compare-and-swaps, {BITONIC_STEPS}
barriers for {V_MAX} elements, every thread busy in every step.

**Launch:** one block of {TPB} threads per request (`grid = {ROWS}`); `logits` float32 `({ROWS}, V)` with
`V <= {V_MAX}` a multiple of 8 (so every row starts on a 32-byte sector); `top_k` int32 (1 to
min({K_MAX}, V)), `temperature` and `u` float32, one of each per row; outputs `topk_ids` int32
`({ROWS}, {K_MAX})` and `token` int32 `({ROWS},)`. Rules: read each logit once (at most {V_MAX // TPB} reads
of `logits` per thread), at most {SHARED_BUDGET} bytes of shared memory, and parallel work: at most
{WORK_BUDGET:,} warp-level shared-memory loads per row (the bitonic sort needs {BITONIC_LOADS:,}; a rank
sort, where every element counts the elements bigger than it, needs {V_MAX * TPB // 32:,}; one thread
picking the k best by scanning the row k times up to {K_MAX * V_MAX:,}). ★★: coalesced loads and stores.

**Read more:** {READING}
"""


def sort_order(row: np.ndarray) -> np.ndarray:
    """Token ids by logit, largest first; equal logits in increasing id order."""
    return np.lexsort((np.arange(row.size), -row.astype(np.float64)))


def weights(row: np.ndarray, kept: np.ndarray, temperature: float) -> np.ndarray:
    top = row[kept].astype(np.float64)
    return np.exp((top - top[0]) / float(temperature))


def spec(logits: np.ndarray, top_k: np.ndarray, temperature: np.ndarray, u: np.ndarray, topk_ids: np.ndarray,
         token: np.ndarray) -> dict[str, np.ndarray]:
    ids = np.full(topk_ids.shape, -1, dtype=np.int32)
    tok = np.empty(token.shape, dtype=np.int32)
    for b, row in enumerate(logits):
        kept = sort_order(row)[:top_k[b]]
        ids[b, :kept.size] = kept
        tok[b] = kept[draw(weights(row, kept, temperature[b]), float(u[b]))]
    return {"topk_ids": ids, "token": tok}


def _case(name: str, logits: np.ndarray, top_k, temperature, u, note: str) -> Case:
    logits = np.asarray(logits, dtype=np.float32)
    assert logits.shape[0] == ROWS and logits.shape[1] <= V_MAX
    top_k = np.asarray(top_k, dtype=np.int32)
    assert ((1 <= top_k) & (top_k <= min(K_MAX, logits.shape[1]))).all()
    buffers = {
        "logits": logits,
        "top_k": top_k,
        "temperature": np.asarray(temperature, dtype=np.float32),
        "u": np.asarray(u, dtype=np.float32),
        "topk_ids": np.full((ROWS, K_MAX), SENTINEL, dtype=np.int32),
        "token": np.full(ROWS, SENTINEL, dtype=np.int32),
    }
    step = LaunchStep("top_k_sample", grid=ROWS, block=TPB,
                      args=("logits", "top_k", "temperature", "u", "topk_ids", "token"))
    return Case(name, buffers, (step,), note)


def _random(rng: np.random.Generator, name: str, logits: np.ndarray, note: str, top_k=None,
            temperature=None) -> Case:
    """Random k and temperature per row where not given, and a uniform well inside one token's interval."""
    v = logits.shape[1]
    top_k = rng.integers(1, min(K_MAX, v) + 1, ROWS) if top_k is None else np.asarray(top_k)
    temperature = rng.uniform(0.5, 1.5, ROWS) if temperature is None else np.asarray(temperature)
    temperature = temperature.astype(np.float32)
    logits = logits.astype(np.float32)
    u = [uniform_for(rng, weights(row, sort_order(row)[:k], t)) for row, k, t in zip(logits, top_k, temperature)]
    return _case(name, logits, top_k, temperature, u, note)


EXAMPLE_LOGITS = [1.0, 3.0, 2.0, 3.0, -1.0, 0.5, -2.0, 0.0]


def _worked_example() -> Case:
    """The description's row, then the same logits under other settings (all fixed: no random numbers)."""
    logits = np.tile(np.float32(EXAMPLE_LOGITS), (ROWS, 1))
    top_k = [3, 1, 8, 2, 3, 5, 4, 8]
    temperature = [1.0, 1.0, 1.0, 0.25, 4.0, 1.0, 0.5, 2.0]
    u = [0.6, 0.5, 0.98, 0.7, 0.05, 0.9, 0.3, 0.45]    # each at least 0.1% of the total inside its token
    return _case("worked example, 8 settings", logits, top_k, temperature, u,
                 "row 0 is the description's example; row 1 (k = 1) is greedy: the tie at 3 goes to id 1")


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(76) if rng is None else rng
    ties = np.round(rng.normal(0, 2, (ROWS, 296)) * 2) / 2        # multiples of 0.5: many equal logits
    large = rng.normal(0, 100, (ROWS, 704))
    return (
        _worked_example(),
        _random(rng, "random V=1000", rng.normal(0, 2, (ROWS, 1000)), "a vocabulary that is not a power of "
                "two: 24 slots of padding at -inf"),
        _random(rng, "V=1024, k=32", rng.normal(0, 1.5, (ROWS, V_MAX)), "a full sort, no padding; every lane "
                "of the sampling warp has a token", top_k=[K_MAX] * ROWS),
        _random(rng, "ties V=296", ties, "logits in steps of 0.5: runs of equal logits, cut by k; the lower "
                "id must come first"),
        _random(rng, "small vocabulary V=24", rng.normal(0, 1, (ROWS, 24)), "k up to V = 24: the rest of "
                "topk_ids is -1", top_k=[24, 1, 7, 24, 13, 2, 19, 5]),
        _random(rng, "large logits, low temperature", large, "logits in the hundreds with temperature 0.1-0.5: "
                "exp((logit - max) / T), never exp(logit / T)", temperature=rng.uniform(0.1, 0.5, ROWS)),
    )


def bench(n: int) -> Case:
    """About n logits: n / 1024 requests of a 1024-token vocabulary (each block sorts one row)."""
    rows = max(1, n // V_MAX)
    rng = np.random.default_rng(76)
    logits = rng.normal(0, 2, (rows, V_MAX)).astype(np.float32)
    top_k = rng.integers(1, K_MAX + 1, rows).astype(np.int32)
    temperature = rng.uniform(0.5, 1.5, rows).astype(np.float32)
    # every row at once, as _random does row by row: the k best, their weights, a uniform inside one interval
    order = np.lexsort((np.broadcast_to(np.arange(V_MAX), logits.shape), -logits.astype(np.float64)), axis=1)
    best = np.take_along_axis(logits, order[:, :K_MAX], axis=1).astype(np.float64)
    w = np.exp((best - best[:, :1]) / temperature[:, None].astype(np.float64))
    w[np.arange(K_MAX)[None, :] >= top_k[:, None]] = 0.0
    buffers = {
        "logits": logits,
        "top_k": top_k,
        "temperature": temperature,
        "u": uniforms_for(rng, w),
        "topk_ids": np.full((rows, K_MAX), SENTINEL, dtype=np.int32),
        "token": np.full(rows, SENTINEL, dtype=np.int32),
    }
    step = LaunchStep("top_k_sample", grid=rows, block=TPB,
                      args=("logits", "top_k", "temperature", "u", "topk_ids", "token"))
    return Case(f"bench {rows} rows", buffers, (step,), "graduate-mode timing")


PUZZLE = Puzzle(
    slug="top-k-sampling",
    number=76,
    title="Top-k sampling",
    chapter=11,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("top_k_sample",),
    spec=spec,
    make_cases=make_cases,
    outputs=("topk_ids", "token"),
    constraints=(
        must_use_shared(),
        shared_memory_budget(SHARED_BUDGET),
        max_global_reads_per_thread(V_MAX // TPB, "logits"),
        max_shared_loads_per_row(WORK_BUDGET, ROWS, f"a bitonic sort needs {BITONIC_LOADS:,}; counting "
                                 "every element's rank, or scanning the row once per kept token, needs "
                                 "several times more"),
        max_global_writes_per_thread(1, "topk_ids"),
        max_global_writes_per_thread(1, "token"),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced loads and stores", (ideal_coalescing(),)),
    ),
    hints=(
        f"Load: thread t fills slots t and t + {TPB} of `vals` (float32) and `ids` (int32) — the logit, or "
        "-inf past V — and `ids[i] = i`. Element i belongs before element j when "
        "`vals[i] > vals[j] or (vals[i] == vals[j] and ids[i] < ids[j])`.",
        "Two nested while loops (`size` doubling from 2, `stride` halving from size // 2), one "
        "compare-and-swap per thread and a `cuda.syncthreads()` in the inner loop, outside any `if`. Swap "
        "the pair when `j_first == descending`, where `j_first` says the partner belongs first.",
        "Warp 0 then: `w = exp((vals[t] - vals[0]) / T)` for `t < k` (else 0); "
        "`y = cuda.shfl_up_sync(0xFFFFFFFF, c, off)`, `if t >= off: c += y` for off = 1, 2, 4, 8, 16; "
        "`total = cuda.shfl_sync(0xFFFFFFFF, c, k - 1)`; "
        "`hit = cuda.ballot_sync(0xFFFFFFFF, t < k and c > u[b] * total)`; the token is "
        "`ids[cuda.ffs(hit) - 1]`.",
    ),
    reading=READING,
    bench=bench,
)
