"""Puzzle 61 — Gradient-norm clipping: one global L2 norm over every gradient, summed in a fixed order."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    max_launches,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
)

TPB = 128
EPS = 1e-6                      # PyTorch's clip_grad_norm_ adds it to the norm before dividing

READING = ("*Automatic Mixed Precision* recipe — PyTorch, the section *Working with Unscaled Gradients* "
           "(gradient clipping between `unscale_` and `step`)")

DESCRIPTION = f"""\
# Puzzle 61 — Gradient-norm clipping

One bad batch can produce a gradient a thousand times larger than usual, and one step along it can undo
hours of training. **Clipping by the global norm** caps the step: compute the L2 norm of *all* the
gradients together, and if it is larger than `max_norm`, scale every gradient down by the same factor.
The direction of the step is kept; only its length is capped. This is `torch.nn.utils.clip_grad_norm_`:

    norm = sqrt(sum of grads[i]^2 over every i)
    coef = min(max_norm / (norm + {EPS:g}), 1)
    grads[i] *= coef                            (and the norm before clipping is returned)

The norm needs every element before any element can be scaled: three launches, because the end of a
launch is the only barrier between blocks.

```
launch 1  sumsq_kernel  grid ceil(n / {TPB})  partials[b] = sum of grads[i]^2 over block b
launch 2  norm_kernel   grid 1               one block adds all partials (a block-stride
                                             loop, then a tree); thread 0 writes norm, coef
launch 3  clip_kernel   grid ceil(n / {TPB})  grads[i] *= coef[0]
```

**Why not atomics?** `cuda.atomic.add(total, 0, x)` from every block would give one launch less, but float
addition is not associative: blocks arrive in a different order each run, so the norm — and every clipped
gradient — changes in its last bits from run to run. A fixed reduction order gives the same bits every
time. (It also clips only once the sum is complete, which an atomic cannot tell you.)

**Example:** `grads = [3, 4, 0, -12]`, `max_norm = 6.5`: `norm = 13`, `coef = 6.5 / 13.000001 = 0.49999996`,
`grads = [1.5, 2, 0, -6]` (to 7 digits). With `max_norm = 20` the coefficient is 1 and nothing changes.

**What's new:** a reduction over an array far larger than a block, through a scratch buffer and launch
boundaries, whose result then feeds back into every element.

**Launch:** as above, all blocks of {TPB} threads. `grads` float32 `(n,)`, clipped in place; `partials`
float32 `(ceil(n / {TPB}),)` scratch (may hold more partials than launch 2 has threads); `norm` and `coef`
float32 `(1,)`; `max_norm` float32. `grads` and `norm` are compared (rtol 1e-5: a float32 tree sum of
`n` squares is that close). Each thread reads `grads` at most once and writes it at most once per launch;
no atomics.

**Read more:** {READING}
"""


def spec(grads, partials, norm, coef, max_norm) -> dict[str, np.ndarray]:
    g = grads.astype(np.float64)
    total = np.sqrt(np.sum(g * g))
    factor = min(float(max_norm) / (total + EPS), 1.0)
    return {"grads": (g * factor).astype(np.float32), "norm": np.array([total], np.float32)}


def _case(name: str, grads, max_norm: float, note: str) -> Case:
    grads = np.ascontiguousarray(grads, dtype=np.float32)
    n = grads.size
    blocks = (n + TPB - 1) // TPB
    buffers = {
        "grads": grads,
        "partials": np.full(blocks, np.nan, np.float32),
        "norm": np.full(1, np.nan, np.float32),
        "coef": np.full(1, np.nan, np.float32),
        "max_norm": np.float32(max_norm),
    }
    steps = (
        LaunchStep("sumsq_kernel", blocks, TPB, ("grads", "partials")),
        LaunchStep("norm_kernel", 1, TPB, ("partials", "norm", "max_norm", "coef")),
        LaunchStep("clip_kernel", blocks, TPB, ("grads", "coef")),
    )
    return Case(name, buffers, steps, note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(61) if rng is None else rng
    n = int(rng.integers(3000, 9000))
    spiky = rng.normal(0, 1e-3, 5000)
    spiky[rng.integers(0, 5000, 3)] = [40.0, -25.0, 60.0]
    return (
        _case("worked example n=4", [3, 4, 0, -12], 6.5, "the example of the description"),
        _case("worked example, no clipping n=4", [3, 4, 0, -12], 20.0,
              "norm 13 < 20: the coefficient is 1 and the gradients stay"),
        _case(f"random n={n}", rng.normal(0, 0.05, n), 1.0,
              f"{n} gradients, norm about {0.05 * np.sqrt(n):.1f}: clipped to 1"),
        _case("spiky n=5000", spiky, 1.0, "three huge gradients among small ones: every element is scaled "
              "by the same factor, not only the large ones"),
        _case("more partials than threads n=16640", rng.normal(0, 1, 16640), 50.0,
              f"130 blocks in launch 1: launch 2's {TPB} threads must each add more than one partial"),
        _case("tiny gradients n=1000", rng.normal(0, 1e-7, 1000), 1e-6,
              "norm about 3e-6 and max_norm 1e-6: the 1e-6 added to the norm changes the coefficient by 25%"),
        _case("n=1", [-7.5], 0.5, "one gradient: clipped to -0.5 (almost)"),
    )


def bench(n: int) -> Case:
    rng = np.random.default_rng(61)
    return _case(f"bench n={n}", rng.normal(0, 1e-3, n).astype(np.float32), 1.0, "graduate-mode timing")


PUZZLE = Puzzle(
    slug="grad-norm-clip",
    number=61,
    title="Gradient-norm clipping",
    chapter=9,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("sumsq_kernel", "norm_kernel", "clip_kernel"),
    spec=spec,
    make_cases=make_cases,
    outputs=("grads", "norm"),
    scratch=("partials", "coef"),   # written by the kernels, not judged
    constraints=(
        max_global_reads_per_thread(1, "grads"),
        max_global_writes_per_thread(1, "grads"),
        max_launches(3),
        must_use_shared(),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced in all three launches", (ideal_coalescing(),)),
        Star(3, "no bank conflicts in the two tree sums", (no_bank_conflicts(),)),
    ),
    hints=(
        "Write the block's tree sum once, as a device function over a `cuda.shared.array(TPB, "
        "numba.float32)` (puzzle 10); launches 1 and 2 both call it.",
        "Launch 2: `acc = numba.float32(0)`, `for b in range(t, partials.size, TPB): acc += partials[b]`, "
        "tree-sum `acc`, then thread 0 takes `math.sqrt`.",
        "`coef[0] = min(max_norm / (total + numba.float32(1e-6)), numba.float32(1.0))`; launch 3 is "
        "`if i < grads.size: grads[i] *= coef[0]`.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=0.0,
    bench=bench,
)
