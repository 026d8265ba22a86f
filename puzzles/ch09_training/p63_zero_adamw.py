"""Puzzle 63 — ZeRO-sharded AdamW: each rank keeps and updates only its slice of the optimizer state."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    max_launches,
    no_atomics,
)

from .bf16 import bf16_to_float, round_nearest_even
from .p62_adamw import (
    HYPER,
    SENTINEL,
    STATE,
    adamw_math,
    history,
    hyperparameters,
    keep_off_boundaries,
    near_boundaries,
)
from .rules import float32_arithmetic_only

TPB = 128
SHARED_BYTES = TPB * 4
MAX_RANKS = 8
ALIGN = 16                       # shard sizes are multiples of 16 parameters: 32-byte aligned bf16 rows

READING = ("*ZeRO: Memory Optimizations Toward Training Trillion Parameter Models* (2019) — Rajbhandari "
           "et al., section 5 (optimizer state partitioning), and *Transformer Math 101* — EleutherAI")

DESCRIPTION = f"""\
# Puzzle 63 — ZeRO: shard the optimizer state

With data parallelism, `N` GPUs (**ranks**) each hold the whole model and each compute the gradient of
their own part of the batch. Plain data parallelism also gives every rank the whole optimizer state:
16 bytes per parameter on every rank (puzzle 62) — 112 GB per GPU for a 7-billion-parameter model. But the
optimizer's 12 bytes are only needed in the step, and the step of parameter `j` needs nothing from the
other parameters. **ZeRO** (stage 1) splits the parameters into `N` slices; rank `r` keeps the fp32
master weights and moments of slice `r` only, and updates only that slice:

```
bytes per parameter, per rank     plain data parallel    ZeRO-1           N = 8, 7 B params
bf16 weights                       2                     2
bf16 gradients                     2                     2
fp32 master w, m, v               12                     12 / N
total                             16  (112 GB)           4 + 12/N = 5.5   (38.5 GB)
```

(ZeRO-2 also drops the gradients outside the rank's slice once they are reduced: 2 + 14/N; ZeRO-3 shards
the weights too: 16/N.) One step, for rank `r`, on its slice of `S` parameters `r*S .. r*S + S - 1`:

1. **reduce-scatter** — the gradient of the batch is the *mean* of the ranks' gradients:
   `g = (grads[0, k] + grads[1, k] + ... + grads[N-1, k]) / N` for the slice's parameters `k`;
2. **AdamW** on the slice, exactly as in puzzle 62, on `w[r], m[r], v[r]`;
3. **all-gather** — every rank needs every new bf16 weight for the next forward pass: write `bf16(w)`
   into `params[q, k]` for every rank `q`.

On a real cluster steps 1 and 3 are collectives over the links between GPUs (chapter 10). Here one GPU
holds the whole cluster's memory, laid out by rank: row `q` of `grads` and `params` is what rank `q`
holds, row `r` of `w, m, v` is rank `r`'s shard, and row `r` of the grid is rank `r`'s work.

```
grid (ceil(S / {TPB}), N), block (bx, r), thread t:  j = bx * {TPB} + t,  k = r * S + j
   reads   grads[0..N-1, k]  (2N bytes),  w[r, j], m[r, j], v[r, j]  (12 bytes)
   writes  w[r, j], m[r, j], v[r, j]  (12 bytes),  params[0..N-1, k]  (2N bytes)
```

The parameters are padded to `n = N * S` with `S` a multiple of {ALIGN} (DeepSpeed pads too): every
slice then starts on a 32-byte sector, and the padding's zero gradients leave its zero state at zero.

**Example:** `N = 2`, `S = 16` (parameters 0-15 on rank 0, 16-31 on rank 1), step 1 (`m = v = 0`),
`lr = 0.1`, `weight_decay = 0.1`: parameter 16 with master weight `w[1, 0] = 1.0` and gradients
`grads[0, 16] = 0.75`, `grads[1, 16] = 0.25` has `g = 0.5` and moves as in puzzle 62:
`w[1, 0] = 0.99 - 0.1 = 0.89`, and `params[0, 16] = params[1, 16] = 0x3F64`.

**What's new:** memory per rank as the design goal — the same step, with the optimizer state split so
that each rank stores 12/N bytes of it per parameter instead of 12.

**Launch:** grid `(ceil(S / {TPB}), N)`, block {TPB}, {SHARED_BYTES} bytes of dynamic shared memory.
`zero_adamw_kernel(params, grads, w, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1,
bias_correction2)`: `params`, `grads` uint16 `(N, n)`; `w, m, v` float32 `(N, S)`; hyperparameters as in
puzzle 62; `N <= {MAX_RANKS}`. Tolerances as in puzzle 62 (`params` bit for bit).

**Read more:** {READING}
"""


def mean_gradient(grads) -> np.ndarray:
    """The mean over ranks of the bf16 gradients, per parameter, in float64: shape (n,)."""
    return bf16_to_float(grads).astype(np.float64).mean(axis=0)


def zero_reference(grads, w, m, v, *hyper) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sharded step in float64: the mean gradient over ranks, then AdamW on each rank's (N, S) slice."""
    return adamw_math(mean_gradient(grads).reshape(w.shape), w, m, v, *hyper)


def mean_gradient_error(grads) -> np.ndarray:
    """A bound, in units of 2^-24, on how far a float32 kernel's mean gradient can be from the exact one.

    The bf16 gradients of a parameter are multiples of the smallest one's last bit, q; when their absolute
    sum is at most 2^24 q, every partial sum, in any order, is a multiple of q below 2^24 q and so exact in
    float32, and only the division by N (or a product with 1/N: two roundings) rounds: 2 |mean|. Otherwise
    each of the N - 1 additions rounds by at most 2^-24 of the absolute sum: (N - 1 + 2) times the mean of
    the absolute values."""
    values = bf16_to_float(grads).astype(np.float64)
    ranks = values.shape[0]
    magnitude = np.abs(values)
    _, exponent = np.frexp(magnitude)                             # magnitude = [0.5, 1) x 2^exponent
    exponent = np.where(magnitude > 0, exponent, np.iinfo(exponent.dtype).max).min(axis=0)
    last_bit = np.ldexp(1.0, np.minimum(exponent, 64) - 8)        # bf16: 8 significant bits
    exact = magnitude.sum(axis=0) <= 2.0**24 * last_bit
    return np.where(exact, 2 * np.abs(values.mean(axis=0)), (ranks + 1) * magnitude.mean(axis=0))


def spec(params, grads, w, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1,
         bias_correction2) -> dict[str, np.ndarray]:
    new_w, new_m, new_v = zero_reference(grads, w, m, v, lr, beta1, beta2, eps, weight_decay,
                                         bias_correction1, bias_correction2)
    w32 = new_w.astype(np.float32)
    gathered = np.broadcast_to(round_nearest_even(w32).reshape(-1), params.shape).copy()
    return {"params": gathered, "w": w32, "m": new_m.astype(np.float32), "v": new_v.astype(np.float32)}


def shard_size(n_real: int, ranks: int) -> int:
    """Parameters per rank: n_real split N ways, rounded up to a multiple of ALIGN."""
    per_rank = -(-n_real // ranks)
    return -(-per_rank // ALIGN) * ALIGN


def _case(name: str, grads_real, w_real, m_real, v_real, ranks: int, hyper: dict, note: str,
          rng: np.random.Generator | None = None) -> Case:
    """Pad the parameters to N * S, lay the state out by rank, keep results off bf16 boundaries."""
    grads_real = np.asarray(grads_real, dtype=np.float32)
    n_real = grads_real.shape[1]
    assert grads_real.shape[0] == ranks <= MAX_RANKS
    shard = shard_size(n_real, ranks)
    n = ranks * shard
    grads = np.zeros((ranks, n), np.float32)
    grads[:, :n_real] = grads_real
    state = []
    for a in (w_real, m_real, v_real):
        full = np.zeros(n, np.float32)
        full[:n_real] = a
        state.append(full.reshape(ranks, shard))
    w, m, v = state
    g_bits = round_nearest_even(grads)
    grad = mean_gradient(g_bits).reshape(w.shape)
    g_error = mean_gradient_error(g_bits).reshape(w.shape)
    if rng is not None:              # nudged until no new weight is near a boundary
        w = keep_off_boundaries(rng, grad, w, m, v, hyper, g_error)
    else:                            # hand-made: must be far from every boundary as it is
        assert not near_boundaries(grad, w, m, v, hyper, g_error).any(), name
    buffers = {"params": np.full((ranks, n), SENTINEL, np.uint16), "grads": g_bits, "w": w, "m": m, "v": v,
               **hyper}
    step = LaunchStep("zero_adamw_kernel", ((shard + TPB - 1) // TPB, ranks), TPB,
                      ("params", "grads", *STATE, *HYPER), shared_mem=SHARED_BYTES)
    return Case(name, buffers, (step,), note)


def _worked() -> Case:
    grads = np.zeros((2, 32))
    grads[:, 16] = [0.75, 0.25]
    w = np.zeros(32)
    w[16] = 1.0
    return _case("worked example N=2 n=32", grads, w, np.zeros(32), np.zeros(32), 2,
                 hyperparameters(1, lr=0.1), "the example of the description: only parameter 16 moves")


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(63) if rng is None else rng
    n4 = int(rng.integers(900, 1100))
    m10, v10 = history(rng, 1000, 1e-3)
    m3, v3 = history(rng, 700, 1e-3)
    m8, v8 = history(rng, 2000, 1e-3)
    return (
        _worked(),
        _case(f"4 ranks, first step n={n4}", rng.normal(0, 1e-3, (4, n4)), rng.normal(0, 0.02, n4),
              np.zeros(n4), np.zeros(n4), 4, hyperparameters(1),
              f"{n4} parameters padded to 4 x {shard_size(n4, 4)}", rng),
        _case("4 ranks, step 10 n=1000", rng.normal(0, 1e-3, (4, 1000)), rng.normal(0, 0.02, 1000), m10, v10,
              4, hyperparameters(10), "moments with history", rng),
        _case("3 ranks n=700", rng.normal(0, 1e-3, (3, 700)), rng.normal(0, 0.02, 700), m3, v3, 3,
              hyperparameters(50), f"an odd number of ranks: slices of {shard_size(700, 3)}, the last one "
              f"ending in {3 * shard_size(700, 3) - 700} padding parameters", rng),
        _case("8 ranks n=2000", rng.normal(0, 1e-3, (8, 2000)), rng.normal(0, 0.02, 2000), m8, v8, 8,
              hyperparameters(200), "the most ranks: each thread sums 8 gradients and writes 8 copies", rng),
        _case("ranks disagree N=2 n=64", np.stack([np.full(64, 2e-3), np.full(64, -2e-3)]),
              rng.normal(0, 0.02, 64), np.zeros(64), np.zeros(64), 2, hyperparameters(1),
              "the two ranks' gradients cancel: the mean is 0, and only weight decay moves w", rng),
        _case("1 rank n=300", rng.normal(0, 1e-3, (1, 300)), rng.normal(0, 0.02, 300), np.zeros(300),
              np.zeros(300), 1, hyperparameters(1), "N = 1 is puzzle 62: nothing is sharded", rng),
    )


def bench(n: int) -> Case:
    rng = np.random.default_rng(63)
    m, v = history(rng, n, 1e-3)
    return _case(f"bench N={MAX_RANKS} n={n}", rng.normal(0, 1e-3, (MAX_RANKS, n)), rng.normal(0, 0.02, n), m, v,
                 MAX_RANKS, hyperparameters(10), "graduate-mode timing: n parameters over 8 ranks", rng)


PUZZLE = Puzzle(
    slug="zero-adamw",
    number=63,
    title="ZeRO: sharded AdamW",
    chapter=9,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("zero_adamw_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("params", "w", "m", "v"),
    constraints=(
        max_global_reads_per_thread(MAX_RANKS, "grads"),
        max_global_writes_per_thread(MAX_RANKS, "params"),
        max_global_reads_per_thread(0, "params"),
        *(max_global_reads_per_thread(1, a) for a in STATE),
        *(max_global_writes_per_thread(1, a) for a in STATE),
        max_launches(1),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced: every rank's slice starts on a sector, and a warp walks along it",
             (ideal_coalescing(),)),
        Star(3, "float32 arithmetic only", (float32_arithmetic_only(),)),
    ),
    hints=(
        "`r = cuda.blockIdx.y`, `j = cuda.blockIdx.x * TPB + t`, guard `j < w.shape[1]`; the parameter is "
        "`k = r * w.shape[1] + j` and the number of ranks `grads.shape[0]`.",
        "Sum `widen(grads[q, k])` over `q in range(ranks)` in float32, then divide by "
        "`numba.float32(ranks)`; the AdamW lines are puzzle 62's, on `w[r, j], m[r, j], v[r, j]`.",
        "After narrowing the new weight once, `for q in range(ranks): params[q, k] = bits` — the "
        "all-gather.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-9,
    bench=bench,
)
