"""Puzzle 59 — Gradient accumulation: add micro-batch gradients into an fp32 buffer, weighted by tokens."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    no_atomics,
)

from .bf16 import bf16_to_float, round_nearest_even

TPB = 128
SHARED_BYTES = TPB * 4
MAX_MICRO = 8

READING = ("*The Ultra-Scale Playbook* — Hugging Face, the section on gradient accumulation (memory for "
           "activations against the number of forward and backward passes)")

DESCRIPTION = f"""\
# Puzzle 59 — Gradient accumulation

Activation memory grows with the batch: every stored activation has one copy per token. When a batch of
1 M tokens does not fit, split it into `K` **micro-batches**, run forward and backward on each in turn and
add their gradients into one buffer; step the optimizer once, after the last. Activations are held for one
micro-batch at a time — `K` times less — and the step is the same as with the whole batch, for `K`
forward-and-backward passes instead of one.

*The same* — if the gradients are added with the right weights. The loss of a batch is the mean over
**all its tokens**. Each micro-batch's backward pass gives the gradient of *its own* mean, over its own
`tokens[k]` tokens. Micro-batches with padding or packed sequences have different token counts, so the
mean of the `K` gradients is not the batch gradient: micro-batch `k` must count `tokens[k] / sum(tokens)`.

```
launch k = 0     acc  = (tokens[0] / T) * grad[0]      T = tokens[0] + ... + tokens[K-1]
launch k = 1     acc += (tokens[1] / T) * grad[1]
...              acc += ...                            acc fp32, grad[k] bf16 bits
```

**Example:** `tokens = [3, 1]`, `grad[0] = [1, -2, 0.5]`, `grad[1] = [3, 2, -0.5]` give
`acc = (3 * grad[0] + 1 * grad[1]) / 4 = [1.5, -1, 0.25]`. The mean of the two gradients,
`[2, 0, 0]`, weighs the one-token micro-batch as much as the three-token one.

The first launch **writes** `acc`, it does not add to it: `acc` starts as NaN here, as an unset gradient
would (PyTorch's first backward assigns `.grad`, later ones add to it). The gradients come in bf16, the
format of the model; the accumulator is fp32, so that adding up `K` of them loses nothing that matters
(puzzle 39's lesson).

**What's new:** trading passes for memory — one optimizer step from `K` backward passes — and the
weighting that makes it equal to the whole batch.

**Launch:** `K` launches of `accumulate_kernel(acc, grad, tokens, k)`, for `k = 0, 1, ..., K - 1` in
order, each with grid `ceil(n / {TPB})`, block {TPB} and {SHARED_BYTES} bytes of dynamic shared memory for
the bf16 widening (puzzle 57). `acc` float32 `(n,)`; `grad` uint16 `(K, n)`, bf16 bits, row `k` is
micro-batch `k`'s gradient; `tokens` int32 `(K,)`, `K <= {MAX_MICRO}`, every count at least 1. Per launch
each thread reads its element of `grad[k]` once, `acc` at most once, writes `acc` once, and may read
`tokens` up to {MAX_MICRO + 1} times. `acc` is compared with rtol 1e-5 and atol 5e-8 (gradients here are
about 1e-2; `K` float32 additions stay far inside that). (`n` is a multiple of 16 wherever `K > 1`, so that every row of
`grad` starts on a 32-byte sector.)

**Read more:** {READING}
"""


def spec(acc: np.ndarray, grad: np.ndarray, tokens: np.ndarray, **micro: int) -> dict[str, np.ndarray]:
    weights = np.asarray(tokens, dtype=np.float64) / float(np.sum(tokens, dtype=np.int64))
    total = (weights[:, None] * bf16_to_float(grad).astype(np.float64)).sum(axis=0)
    return {"acc": total.astype(np.float32)}


def _case(name: str, grads: np.ndarray, tokens, note: str) -> Case:
    grads = np.asarray(grads, dtype=np.float32)
    tokens = np.asarray(tokens, dtype=np.int32)
    micro, n = grads.shape
    assert tokens.shape == (micro,) and 1 <= micro <= MAX_MICRO and (tokens >= 1).all()
    buffers = {"acc": np.full(n, np.nan, np.float32), "grad": round_nearest_even(grads), "tokens": tokens}
    buffers.update({f"k{k}": k for k in range(micro)})
    grid = (n + TPB - 1) // TPB
    steps = tuple(LaunchStep("accumulate_kernel", grid, TPB, ("acc", "grad", "tokens", f"k{k}"),
                             shared_mem=SHARED_BYTES) for k in range(micro))
    return Case(name, buffers, steps, note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(59) if rng is None else rng
    n = 16 * int(rng.integers(19, 44))     # rows of `grad` start on 32-byte sectors
    packed = rng.integers(50, 2048, 4)
    return (
        _case("worked example K=2 n=3", [[1, -2, 0.5], [3, 2, -0.5]], [3, 1],
              "the example of the description"),
        _case(f"padded micro-batches K=4 n={n}", rng.normal(0, 1e-2, (4, n)), packed,
              f"token counts {packed.tolist()}: the mean of the four gradients is not the batch gradient"),
        _case("one long, seven short K=8 n=512", rng.normal(0, 1e-2, (8, 512)),
              [4000, 3, 9, 1, 27, 81, 243, 5],
              "one micro-batch holds almost all the tokens"),
        _case("equal micro-batches K=3 n=256", rng.normal(0, 1e-2, (3, 256)), [128, 128, 128],
              "equal counts: here the plain mean is right too"),
        _case("opposite signs K=2 n=208", np.stack([np.full(208, 0.75), np.full(208, -0.25)]), [1, 3],
              "0.75 * 1/4 - 0.25 * 3/4 = 0 exactly: the weights must cancel the gradients"),
        _case("no accumulation K=1 n=130", rng.normal(0, 1, (1, 130)), [77],
              "one micro-batch: acc is its gradient widened to fp32; 130 = one block and two threads"),
    )


def bench(n: int) -> Case:
    rng = np.random.default_rng(59)
    return _case(f"bench K=4 n={n}", rng.normal(0, 1e-2, (4, n)).astype(np.float32),
                 rng.integers(50, 2048, 4), "graduate-mode timing: four micro-batches of n parameters")


PUZZLE = Puzzle(
    slug="grad-accumulation",
    number=59,
    title="Gradient accumulation",
    chapter=9,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("accumulate_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("acc",),
    constraints=(
        max_global_reads_per_thread(1, "grad"),
        max_global_reads_per_thread(1, "acc"),
        max_global_writes_per_thread(1, "acc"),
        max_global_reads_per_thread(MAX_MICRO + 1, "tokens"),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced: a warp reads 64 neighbouring bytes of grad and 128 of acc", (ideal_coalescing(),)),
    ),
    hints=(
        "Add up `tokens` in a loop (`for j in range(tokens.size)`) to get the batch's token count `T`; the "
        "weight of this launch is `tokens[k] / T`.",
        "Widen `grad[k, i]` as in puzzle 57: `as_bits[t] = numba.uint32(grad[k, i]) << 16`, fence, read "
        "`as_float[t]`.",
        "`if k == 0: acc[i] = weight * g` `else: acc[i] += weight * g` — the first launch must not read the "
        "NaN that acc starts as.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=5e-8,
    bench=bench,
)
