"""Puzzle 57 — bf16 stochastic rounding: many tiny updates to bf16 weights that add up on average."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    no_atomics,
)

from .bf16 import bf16_to_float, round_nearest_even, round_stochastic

TPB = 128
SHARED_BYTES = TPB * 4
MAX_STEPS = 64

READING = ("*Mixed Precision Training* (2017) — Micikevicius et al., section 3.1: weight updates too small "
           "for the weights' format vanish, which their fp32 master copy prevents")

DESCRIPTION = f"""\
# Puzzle 57 — bf16: stochastic rounding

Near 1.0, neighbouring bf16 numbers are `2^-7 = 0.0078125` apart. Add an update of 0.001 to a bf16 weight
of 1.0 and round to nearest: 1.001 is closer to 1.0 than to 1.0078125, so the weight stays 1.0. Every
step. A thousand such updates should move it by 1.0; they move it by **nothing**.

**Stochastic rounding** rounds up with probability equal to how far the value is along the gap: 1.001 is
`0x20C5 / 0x10000 = 12.8 %` of the way from `0x3F80` to `0x3F81`, so it rounds up 12.8 % of the time. On
average the result equals the exact value, and a thousand updates move the weight by about 1.0. With
stochastic rounding a model can keep its weights in bf16 only (2 bytes per weight instead of a bf16 copy
plus an fp32 master copy: puzzle 62).

In bits: add 16 random bits to the 16 bits that are dropped, then cut: `(u + r) >> 16`, where `r` is
uniform in `0..0xFFFF`. The kept half goes up exactly when `dropped + r` carries, which happens for
`dropped` of the 65536 values of `r`. NaN is still special (write `0x7FC0`); infinity is not (its dropped
half is 0, nothing carries).

So that results can be checked, the random numbers are given: `rand[s, i]` (uint16) is the one to use
for weight `i` at step `s`. Each thread owns one weight and, for every step `s = 0, 1, ...`:

```
w (bf16) --widen--> float32 --+ updates[s, i]--> float32 --round, rand[s, i]--> w (bf16)
          bits << 16            a float32 add             (u + r) >> 16, NaN -> 0x7FC0
```

The weight is rounded back to bf16 **after every step**, as it would be stored between optimizer steps.
Keeping a float32 copy in a register across the steps is a different algorithm (it is puzzle 62's fp32
master weight): here it gives the wrong bits.

**Example:** `w = [0x3F80]` (1.0), three steps of `+0.001` with `rand = 0xF000, 0x1000, 0xE800`:

| step | w + 0.001 | bits | dropped + r | w |
|---|---|---|---|---|
| 0 | 1.001 | `0x3F8020C5` | `0x20C5 + 0xF000` carries | `0x3F81` (1.0078125) |
| 1 | 1.0088125 | `0x3F8120C5` | `0x20C5 + 0x1000` does not | `0x3F81` |
| 2 | 1.0088125 | `0x3F8120C5` | `0x20C5 + 0xE800` carries | `0x3F82` (1.015625) |

Rounding to nearest would have left `0x3F80`: 1.0 after three updates of 0.001.

**Widening** bf16 to float32 is exact and needs no rounding: the bf16 bits are the top half, the bottom
half is zero. Store `bits << 16` into the uint32 view and read the float32 view (puzzle 56's aliased
shared arrays, with a `cuda.threadfence_block()` between every store and the read through the other view).

**What's new:** stochastic rounding — unbiased on average, so small updates accumulate — and the widening
direction of the conversion.

**Launch:** grid `ceil(n / {TPB})`, block {TPB}, {SHARED_BYTES} bytes of dynamic shared memory. `w` uint16
`(n,)`, updated in place (one read and one write per thread); `updates` float32 and `rand` uint16, both
`(steps, n)` with `steps <= {MAX_STEPS}`; each thread reads its own column of both, once per step. (Where
`n` is not a multiple of 16, the rows of `rand` do not start on 32-byte sectors; the cases avoid that, so
★★ is reachable.)

**Read more:** {READING}
"""


def spec(w: np.ndarray, updates: np.ndarray, rand: np.ndarray) -> dict[str, np.ndarray]:
    bits = np.asarray(w, dtype=np.uint16)
    with np.errstate(invalid="ignore", over="ignore"):
        for s in range(updates.shape[0]):
            value = (bf16_to_float(bits) + updates[s]).astype(np.float32)
            bits = round_stochastic(value, rand[s])
    return {"w": bits}


def _case(name: str, w_bits: np.ndarray, updates: np.ndarray, rand: np.ndarray, note: str) -> Case:
    w_bits = np.ascontiguousarray(w_bits, dtype=np.uint16)
    updates = np.ascontiguousarray(updates, dtype=np.float32)
    rand = np.ascontiguousarray(rand, dtype=np.uint16)
    n = w_bits.size
    assert updates.shape == rand.shape and updates.shape[1] == n and updates.shape[0] <= MAX_STEPS
    step = LaunchStep("sr_update_kernel", grid=(n + TPB - 1) // TPB, block=TPB, args=("w", "updates", "rand"),
                      shared_mem=SHARED_BYTES)
    return Case(name, {"w": w_bits, "updates": updates, "rand": rand}, (step,), note)


def _random16(rng: np.random.Generator, shape) -> np.ndarray:
    return rng.integers(0, 0x10000, shape, dtype=np.int64).astype(np.uint16)


def _weights(rng: np.random.Generator, n: int, scale: float) -> np.ndarray:
    return round_nearest_even(rng.normal(0, scale, n).astype(np.float32))


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(57) if rng is None else rng
    n = 16 * int(rng.integers(25, 44))      # rows of `rand` start on 32-byte sectors
    tiny_w = np.full(256, 0x3F80, dtype=np.uint16)                       # every weight 1.0
    signs = rng.choice([-1.0, 1.0], (48, 256))
    tiny_updates = signs * rng.uniform(1e-4, 1.9e-3, (48, 256))   # below half a step on both sides of 1.0
    # non-finite: weights near the largest bf16, pushed to overflow; an inf update, then -inf (NaN)
    edge_w = np.array([0x7F7F, 0xFF7F, 0x7F80, 0x3F80, 0x0001, 0x8001, 0x7FC0, 0x0000], dtype=np.uint16)
    edge_updates = np.array([[1e36, -3e38, 1.0, np.inf, 1e-40, -1e-40, 1.0, -0.0],
                             [1.0, 1.0, 1.0, -np.inf, 1e-40, -1e-40, 1.0, 1e-45]], dtype=np.float32)
    return (
        _case("worked example n=1", [0x3F80], [[0.001], [0.001], [0.001]], [[0xF000], [0x1000], [0xE800]],
              "the table of the description"),
        _case("tiny updates 48 steps n=256", tiny_w, tiny_updates, _random16(rng, (48, 256)),
              "updates below half a bf16 step: rounding to nearest never moves a weight"),
        _case(f"training-like 16 steps n={n}", _weights(rng, n, 0.05), rng.normal(0, 2e-4, (16, n)),
              _random16(rng, (16, n)), f"small weights and updates of both signs; {n} is not a multiple of "
              f"{TPB}"),
        _case("large updates 8 steps n=208", _weights(rng, 208, 1.0), rng.normal(0, 0.5, (8, 208)),
              _random16(rng, (8, 208)), "updates as large as the weights: every step changes them"),
        _case("edges 2 steps n=8", edge_w, edge_updates, _random16(rng, (2, 8)),
              "overflow to infinity, infinity minus infinity (a NaN must stay NaN), subnormals, a NaN weight"),
        _case("one step n=1", [0xBF00], [[-0.0013]], [[0xAB00]],
              "-0.5 - 0.0013: a negative value rounds its magnitude up when the random bits carry"),
    )


def bench(n: int) -> Case:
    rng = np.random.default_rng(57)
    steps = 4
    return _case(f"bench n={n}", _weights(rng, n, 0.05), rng.normal(0, 2e-4, (steps, n)),
                 _random16(rng, (steps, n)), "graduate-mode timing: four steps over n weights")


PUZZLE = Puzzle(
    slug="bf16-stochastic-round",
    number=57,
    title="bf16: stochastic rounding",
    chapter=9,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("sr_update_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("w",),
    constraints=(
        max_global_reads_per_thread(1, "w"),
        max_global_writes_per_thread(1, "w"),
        max_global_reads_per_thread(MAX_STEPS, "updates"),
        max_global_reads_per_thread(MAX_STEPS, "rand"),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced: at each step a warp reads 32 neighbouring updates and random numbers",
             (ideal_coalescing(),)),
    ),
    hints=(
        "Read `bits = w[i]` once, loop `for s in range(updates.shape[0])`, and write `w[i] = bits` after "
        "the loop. Inside: widen, add `updates[s, i]`, round with `rand[s, i]`.",
        "Widen: `as_bits[t] = bits << 16`, fence, `value = as_float[t] + updates[s, i]`. Narrow: "
        "`as_float[t] = value`, fence, `u = as_bits[t]`.",
        "Round: `if (u & 0x7FFFFFFF) > 0x7F800000: bits = 0x7FC0` else "
        "`bits = (u + numba.int64(rand[s, i])) >> 16` (the cast keeps the sum a signed 64-bit integer).",
    ),
    reading=READING,
    bench=bench,
)
