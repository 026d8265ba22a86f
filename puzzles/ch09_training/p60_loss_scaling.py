"""Puzzle 60 — Dynamic loss scaling: check fp16 gradients for overflow, skip the step, adjust the scale."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
)

from .rules import max_atomics

TPB = 256
MAX_BLOCKS = 8                 # n <= MAX_BLOCKS * TPB in the cases
GROWTH_FACTOR = 2.0
BACKOFF_FACTOR = 0.5

READING = ("*Automatic Mixed Precision* recipe — PyTorch (`GradScaler`), and *Mixed Precision Training* "
           "(2017) — Micikevicius et al., section 3.2, loss scaling")

DESCRIPTION = f"""\
# Puzzle 60 — Dynamic loss scaling

fp16 has 5 exponent bits: its smallest subnormal is 6e-8 and its largest value 65504. Many gradients are
smaller than 6e-8 and become zero. The fix: multiply the loss by a **scale** `S` (say 2^16) before the
backward pass. Every gradient is then `S` times larger — inside fp16's range — and the optimizer divides
by `S` again, in fp32. (bf16 has float32's 8 exponent bits and needs none of this.)

Too large an `S` makes some gradient overflow to `inf` (or `inf - inf` to NaN). Then that step's
gradients are garbage: **skip the step** and halve `S`. After `growth_interval` clean steps in a row,
double `S` to try a larger one again. That is PyTorch's `GradScaler`, in three launches:

```
launch 1  find_inf_kernel(grads, found_inf)
              found_inf[0] = 1 if any grads[i] is inf or NaN
launch 2  sgd_step_kernel(w, grads, scale, found_inf, lr)
              if found_inf[0] == 0:  w[i] -= lr * (float32(grads[i]) / scale[0])
              else:                  w unchanged
launch 3  update_scale_kernel(scale, growth_tracker, found_inf, growth_interval)   1 thread
              if found_inf[0]:  scale[0] *= {BACKOFF_FACTOR};  growth_tracker[0] = 0
              else:             growth_tracker[0] += 1
                                if growth_tracker[0] == growth_interval:
                                    scale[0] *= {GROWTH_FACTOR};  growth_tracker[0] = 0
```

Launch 2 cannot start until *every* block of launch 1 has looked at its gradients: the end of a launch is
the barrier. Launch 3 is separate because launch 2 still reads `scale[0]` in every thread.

**Setting the flag.** Many threads may find an overflow. PyTorch's kernel lets each of them store 1 —
the CUDA memory model calls concurrent plain stores to one address a data race, and gpusim reports it.
Use an atomic: `cuda.atomic.max(found_inf, 0, 1)`. Better, first ask the block:
`cuda.syncthreads_or(bad)` is non-zero in every thread if any thread of the block passed a non-zero
`bad` (an int, not a bool), and then one thread of the block does the atomic (★★★). A step where the scale
is far too large overflows in *every* element: per-element atomics then queue up on one address.

**Example:** `scale = [1024]`, `lr = 0.1`, `w = [1, 1, 1, 1]`, `grads = [512, -256, 1.5, 0]` (fp16, i.e.
`[0.5, -0.25, 0.00146, 0]` times 1024), `growth_tracker = [2]`, `growth_interval = 2000`: no overflow, so
`w = [0.95, 1.025, 0.99985, 1]`, `growth_tracker = [3]`, `scale = [1024]`. Had `grads[3]` been `inf`:
`w` unchanged, `found_inf = [1]`, `scale = [512]`, `growth_tracker = [0]`.

**What's new:** a decision that depends on every element (one flag, reduced across all blocks by launch
boundaries and an atomic), and a step that is skipped rather than computed.

**Launch:** launches 1 and 2 with grid `ceil(n / {TPB})`, block {TPB}; launch 3 with grid 1, block 1.
`grads` float16 `(n,)`, the scaled gradients; `w` float32 `(n,)`, updated in place; `scale` float32 `(1,)`,
always a power of two; `found_inf` int32 `(1,)`, starts at 0; `growth_tracker` int32 `(1,)`; `lr` float32;
`growth_interval` int. All of `w`, `scale`, `found_inf` and `growth_tracker` are compared. Each thread
reads `grads` at most once per launch.

**Read more:** {READING}
"""


def spec(grads, w, scale, found_inf, growth_tracker, lr, growth_interval) -> dict[str, np.ndarray]:
    found = not np.isfinite(grads.astype(np.float32)).all()
    if found:
        new_w = w.copy()
        new_scale, tracker = scale[0] * BACKOFF_FACTOR, 0
    else:
        unscaled = grads.astype(np.float64) / np.float64(scale[0])
        new_w = (w.astype(np.float64) - np.float64(lr) * unscaled).astype(np.float32)
        tracker = int(growth_tracker[0]) + 1
        new_scale = scale[0]
        if tracker == growth_interval:
            new_scale, tracker = scale[0] * GROWTH_FACTOR, 0
    return {
        "w": new_w,
        "scale": np.array([new_scale], np.float32),
        "found_inf": np.array([int(found)], np.int32),
        "growth_tracker": np.array([tracker], np.int32),
    }


def _case(name: str, grads, w, scale: float, tracker: int, interval: int, note: str,
          lr: float = 1e-2) -> Case:
    grads = np.ascontiguousarray(grads, dtype=np.float16)
    w = np.ascontiguousarray(w, dtype=np.float32)
    n = grads.size
    assert w.shape == grads.shape and np.log2(scale) == int(np.log2(scale)) and 0 <= tracker < interval
    buffers = {
        "grads": grads, "w": w,
        "scale": np.array([scale], np.float32),
        "found_inf": np.zeros(1, np.int32),
        "growth_tracker": np.array([tracker], np.int32),
        "lr": np.float32(lr),
        "growth_interval": interval,
    }
    grid = (n + TPB - 1) // TPB
    steps = (
        LaunchStep("find_inf_kernel", grid, TPB, ("grads", "found_inf")),
        LaunchStep("sgd_step_kernel", grid, TPB, ("w", "grads", "scale", "found_inf", "lr")),
        LaunchStep("update_scale_kernel", 1, 1, ("scale", "growth_tracker", "found_inf", "growth_interval")),
    )
    return Case(name, buffers, steps, note)


def _scaled(rng: np.random.Generator, n: int, scale: float) -> np.ndarray:
    """Gradients of magnitude 1e-9 .. 1e-2 (log-uniform, both signs) times the scale, in fp16."""
    magnitude = 10.0 ** rng.uniform(-9, -2, n)
    with np.errstate(over="ignore"):
        return (magnitude * rng.choice([-1.0, 1.0], n) * scale).astype(np.float16)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(60) if rng is None else rng
    n = int(rng.integers(700, 1000))
    w = rng.normal(0, 1, 2048)
    last_inf = _scaled(rng, n, 2.0**16)
    last_inf[-1] = np.inf
    one_nan = _scaled(rng, 1500, 2.0**16)
    one_nan[600] = np.nan
    first_neg_inf = _scaled(rng, 512, 2.0**14)
    first_neg_inf[0] = -np.inf
    return (
        _case("worked example n=4", [512, -256, 1.5, 0], [1, 1, 1, 1], 1024.0, 2, 2000,
              "the example of the description: a clean step", lr=0.1),
        _case("worked example, overflow n=4", [512, -256, 1.5, np.inf], [1, 1, 1, 1], 1024.0, 2, 2000,
              "the same with an inf: skip, halve the scale, reset the tracker", lr=0.1),
        _case(f"clean step n={n}", _scaled(rng, n, 2.0**16), w[:n], 2.0**16, 5, 2000,
              f"no overflow; {n} is not a multiple of {TPB}: the last block is partial"),
        _case("growth n=1024", _scaled(rng, 1024, 2.0**12), w[:1024], 2.0**12, 3, 4,
              "the fourth clean step in a row: double the scale, tracker back to 0"),
        _case(f"inf in the last element n={n}", last_inf, w[:n], 2.0**16, 7, 2000,
              "one inf, in the last element of the last, partial block"),
        _case("one NaN n=1500", one_nan, w[:1500], 2.0**16, 1, 2000,
              "a NaN and no inf: a check for infinity alone misses it"),
        _case("-inf first n=512", first_neg_inf, w[:512], 2.0**14, 0, 2000, "a negative infinity"),
        _case("everything overflowed n=2048", np.full(2048, np.inf, np.float16), w, 2.0**24, 0, 2000,
              "a scale far too large: every element is inf"),
        _case("largest finite n=300", np.full(300, 65504.0) * rng.choice([-1, 1], 300), w[:300], 2.0**16,
              0, 2000, "+-65504, fp16's largest values, are finite: take the step"),
    )


def bench(n: int) -> Case:
    rng = np.random.default_rng(60)
    return _case(f"bench n={n}", _scaled(rng, n, 2.0**16), rng.normal(0, 1, n), 2.0**16, 5, 2000,
                 "graduate-mode timing")


PUZZLE = Puzzle(
    slug="loss-scaling",
    number=60,
    title="Dynamic loss scaling",
    chapter=9,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("find_inf_kernel", "sgd_step_kernel", "update_scale_kernel"),
    spec=spec,
    make_cases=make_cases,
    outputs=("w", "scale", "found_inf", "growth_tracker"),
    constraints=(
        max_global_reads_per_thread(1, "grads"),
        max_global_reads_per_thread(1, "w"),
        max_global_writes_per_thread(1, "w"),
    ),
    stars=(
        Star(2, "coalesced: a warp reads 64 neighbouring bytes of grads", (ideal_coalescing(),)),
        Star(3, "vote first: one atomic per block that found an overflow, not one per element",
             (max_atomics(MAX_BLOCKS, f"with at most {MAX_BLOCKS} blocks, one per block is enough: ask "
                          "the block with cuda.syncthreads_or first"),)),
    ),
    hints=(
        "Launch 1: `bad = 0`, and for `i < n` set `bad = 1` when `math.isinf(v) or math.isnan(v)` with "
        "`v = numba.float32(grads[i])`. Then `cuda.atomic.max(found_inf, 0, 1)` where `bad`.",
        "For ★★★ every thread must reach `if cuda.syncthreads_or(bad):` (no early return before it), and "
        "only `cuda.threadIdx.x == 0` does the atomic.",
        "Launch 2: `if i < w.size and found_inf[0] == 0: w[i] -= lr * (numba.float32(grads[i]) / "
        "scale[0])`. Launch 3 follows the recipe line by line.",
    ),
    reading=READING,
    rtol=1e-6,
    atol=1e-9,
    bench=bench,
)
