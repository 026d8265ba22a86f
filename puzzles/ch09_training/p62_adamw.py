"""Puzzle 62 — Fused AdamW: fp32 master weights and moments, bf16 weights written back, in one pass."""

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

from .bf16 import bf16_to_float, off_boundaries, round_nearest_even
from .rules import float32_arithmetic_only

TPB = 256
SHARED_BYTES = TPB * 4
SENTINEL = 0xFFDE                # a NaN pattern: rounding a finite weight never produces it
STATE = ("w", "m", "v")
HYPER = ("lr", "beta1", "beta2", "eps", "weight_decay", "bias_correction1", "bias_correction2")

READING = ("*Transformer Math 101* — EleutherAI, the section *Optimizer States* (12 bytes per parameter "
           "for mixed-precision AdamW), and *Mixed Precision Training* (2017), section 3.1")

DESCRIPTION = f"""\
# Puzzle 62 — Fused AdamW with fp32 master weights

The model computes in bf16: its weights `p` and gradients `g` are bf16 (2 bytes each). The optimizer keeps
an **fp32 master copy** `w` of every weight — puzzle 57 showed why: a small update to a bf16 weight
vanishes — and AdamW's two fp32 moments `m` and `v`. Per parameter:

```
bf16 weight p  2 B | bf16 gradient g  2 B | fp32 master w  4 B | fp32 m  4 B | fp32 v  4 B
                                            '-------- optimizer state: 12 B ---------'
                                                                           total 16 B
```

One AdamW step, per parameter, as PyTorch's `AdamW` does it (`t` is the step number, from 1):

    g  = float32(g_bf16)
    w  = w * (1 - lr * weight_decay)       decoupled weight decay: shrinks w, not g
    m  = beta1 * m + (1 - beta1) * g
    v  = beta2 * v + (1 - beta2) * g * g
    w  = w - (lr / bias_correction1) * m / (sqrt(v) / sqrt(bias_correction2) + eps)
    p  = bf16(w)                           round to nearest even (puzzle 56)

`bias_correction1 = 1 - beta1^t` and `bias_correction2 = 1 - beta2^t` are computed on the host and passed
in: `m` and `v` start at zero, so early averages are too small by exactly that factor. `eps` goes **after**
the square root and the bias correction.

A **fused** kernel does the whole step in one pass: each thread reads `g, w, m, v` once and writes
`w, m, v, p` once — 14 bytes read and 14 written per parameter. The unfused `torch.optim` way runs a
kernel per line above, each reading and writing whole tensors.

**Example** (step `t = 1`, so `m` and `v` start at 0): `g = [0.5, -0.25]`, `w = [1, -0.5]`, `lr = 0.1`,
`weight_decay = 0.1`, `beta1 = 0.9`, `beta2 = 0.999`, `eps = 1e-8`. At step 1 `m / bias_correction1 = g` and
`sqrt(v / bias_correction2) = |g|`, so each weight moves by `lr` against its gradient's sign after
shrinking by 1 %: `w = [0.99 - 0.1, -0.495 + 0.1] = [0.89, -0.395]` (to 6 digits), and
`p = [0x3F64, 0xBECA]` = `[0.890625, -0.39453125]`.

**Precision:** compare `w, m, v` with rtol 1e-5, atol 1e-9 — float32 arithmetic is well within that.
`p` is compared **bit for bit**: every case keeps the exact new `w` far enough from a bf16 rounding
boundary (256 x 2^-24 of the size of what the step rounds: `w`, its update, the terms of `m`; over 25 times
what any float32 kernel can be off, in whatever order it computes) that every float32 computation of it
rounds the same way.

**What's new:** a whole optimizer step fused into one memory pass, in mixed precision: bf16 in and out,
fp32 in between.

**Launch:** grid `ceil(n / {TPB})`, block {TPB}, {SHARED_BYTES} bytes of dynamic shared memory (the bf16
conversions through aliased views). `adamw_kernel(p, g, w, m, v, lr, beta1, beta2, eps, weight_decay,
bias_correction1, bias_correction2)`: `p, g` uint16 `(n,)`; `w, m, v` float32 `(n,)`, updated in place;
the seven hyperparameters float32 scalars. ★★★ keeps every operation in float32: a Python literal such as
`1.0` is float64 in numba, so write `numba.float32(1.0)`.

**Read more:** {READING}
"""


def adamw_reference(g_bits, w, m, v, *hyper) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One AdamW step in float64 from the bf16 gradient bits and the float32 state: (w, m, v), unrounded."""
    return adamw_math(bf16_to_float(g_bits).astype(np.float64), w, m, v, *hyper)


def adamw_math(g, w, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1,
               bias_correction2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The AdamW update in float64, line by line as the description writes it."""
    f = np.float64
    w, m, v = (np.asarray(a, dtype=f) for a in (w, m, v))
    lr, beta1, beta2, eps, wd, bc1, bc2 = (f(x) for x in (lr, beta1, beta2, eps, weight_decay,
                                                          bias_correction1, bias_correction2))
    w = w * (1.0 - lr * wd)
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * g * g
    w = w - (lr / bc1) * m / (np.sqrt(v) / np.sqrt(bc2) + eps)
    return w, m, v


def spec(p, g, w, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1,
         bias_correction2) -> dict[str, np.ndarray]:
    new_w, new_m, new_v = adamw_reference(g, w, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1,
                                          bias_correction2)
    w32 = new_w.astype(np.float32)
    return {"p": round_nearest_even(w32), "w": w32, "m": new_m.astype(np.float32),
            "v": new_v.astype(np.float32)}


def hyperparameters(step: int, lr: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
                    weight_decay: float = 0.1) -> dict[str, np.float32]:
    """The seven scalars, float32; the bias corrections from the float32 betas, as the host computes them."""
    b1, b2 = np.float64(np.float32(beta1)), np.float64(np.float32(beta2))
    values = (lr, beta1, beta2, eps, weight_decay, 1.0 - b1**step, 1.0 - b2**step)
    return {name: np.float32(x) for name, x in zip(HYPER, values)}


def error_magnitude(g, w, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2,
                    g_error=0.0) -> np.ndarray:
    """The size, in float64, of what a float32 evaluation of the step rounds on its way to the new ``w``.

    Every float32 operation rounds its result ``r`` by at most 2^-24 |r| (a fused multiply-add rounds once
    where a product and a sum round twice: never more), and an error in an intermediate reaches ``w`` scaled
    by how much ``w`` depends on it. Counted term by term, with E the sum returned here:
    decay factor and decayed weight: 2^-24 (|w| + |decayed|); the m update: its two products and its sum, at
    most 3 x 2^-24 (|beta1 m| + |(1 - beta1) g|), reaching ``w`` times lr / bc1 / denom (a cancellation in
    ``m`` makes this much larger than m's own size; torch's form m + (1 - beta1)(g - m) rounds no more for
    beta1 >= 0.5); v, the square roots, eps and the three products and divisions of the update: together a
    relative error of at most 9 x 2^-24 of the update, |step|; the final subtraction: 2^-24 |new w|. So
    |float32 w - exact w| <= 9 x 2^-24 x E (plus terms of order 2^-48), whatever order, association and
    contraction a kernel uses. ``g_error`` bounds the error of the float32 gradient itself in units of 2^-24
    (0 in this puzzle: widening bf16 is exact; puzzle 63's mean over ranks rounds); it reaches ``w`` through
    |d step / d g| <= lr / bc1 / denom x ((1 - beta1) + |m| sqrt((1 - beta2) / bc2) / denom).
    """
    f = np.float64
    g, w, m, v = (np.asarray(a, dtype=f) for a in (g, w, m, v))
    lr, beta1, beta2, eps, wd, bc1, bc2 = (f(x) for x in (lr, beta1, beta2, eps, weight_decay, bias_correction1,
                                                          bias_correction2))
    decayed = w * (1.0 - lr * wd)
    new_m = beta1 * m + (1.0 - beta1) * g
    denom = np.sqrt(beta2 * v + (1.0 - beta2) * g * g) / np.sqrt(bc2) + eps
    rate = lr / bc1 / denom                                        # d w / d m
    step = rate * new_m
    slope = rate * ((1.0 - beta1) + np.abs(new_m) * np.sqrt((1.0 - beta2) / bc2) / denom)
    return (np.abs(w) + np.abs(decayed) + np.abs(decayed - step) + np.abs(step)
            + rate * (beta1 * np.abs(m) + (1.0 - beta1) * np.abs(g)) + slope * np.asarray(g_error, dtype=f))


def near_boundaries(g, w, m, v, hyper: dict, g_error=0.0) -> np.ndarray:
    """True where the exact new ``w`` lies closer to a bf16 rounding boundary than ``bf16.MARGIN`` (256) times
    2^-24 ``error_magnitude``: more than 25 times what a float32 kernel can be off (9 x 2^-24 of it), so
    everywhere else every float32-accurate kernel rounds ``p`` to the bits the spec gives."""
    values = [hyper[h] for h in HYPER]
    new_w = adamw_math(g, w, m, v, *values)[0]
    return ~off_boundaries(new_w, error_magnitude(g, w, m, v, *values, g_error=g_error))


def keep_off_boundaries(rng: np.random.Generator, g, w, m, v, hyper: dict, g_error=0.0, tries: int = 40):
    """Nudge the master weights whose exact new value lies near a bf16 rounding boundary (``near_boundaries``)
    until none does; ``g`` is the float64 gradient. Elementwise, so only the nudged weights are computed
    again: a benchmark case of 2^24 parameters takes a few passes. Returns the new ``w`` (float32)."""
    w = np.array(w, dtype=np.float32)
    flat = w.reshape(-1)
    g, m, v = (np.broadcast_to(np.asarray(a, dtype=np.float64), w.shape).reshape(-1) for a in (g, m, v))
    g_error = np.broadcast_to(np.asarray(g_error, dtype=np.float64), w.shape).reshape(-1)
    todo = np.arange(flat.size)
    for _ in range(tries):
        todo = todo[near_boundaries(g[todo], flat[todo], m[todo], v[todo], hyper, g_error[todo])]
        if todo.size == 0:
            return w
        flat[todo] = (flat[todo] * np.float32(1.0 + rng.uniform(1e-2, 1e-1)) + np.float32(1e-3)).astype(np.float32)
    raise AssertionError("could not keep the new weights away from bf16 rounding boundaries")


def _case(name: str, g, w, m, v, hyper: dict, note: str, rng: np.random.Generator | None = None) -> Case:
    """A case; with ``rng``, weights near bf16 boundaries are nudged; none may be left either way."""
    g_bits = round_nearest_even(np.asarray(g, dtype=np.float32))
    m = np.ascontiguousarray(m, dtype=np.float32)
    v = np.ascontiguousarray(v, dtype=np.float32)
    w = np.ascontiguousarray(w, dtype=np.float32)
    assert (v >= 0).all() and g_bits.shape == w.shape == m.shape == v.shape
    grad = bf16_to_float(g_bits).astype(np.float64)
    if rng is not None:              # nudged until no new weight is near a boundary
        w = keep_off_boundaries(rng, grad, w, m, v, hyper)
    else:                            # hand-made: must be far from every boundary as it is
        assert not near_boundaries(grad, w, m, v, hyper).any(), name
    n = w.size
    buffers = {"p": np.full(n, SENTINEL, np.uint16), "g": g_bits, "w": w, "m": m, "v": v, **hyper}
    step = LaunchStep("adamw_kernel", (n + TPB - 1) // TPB, TPB, ("p", "g", *STATE, *HYPER),
                      shared_mem=SHARED_BYTES)
    return Case(name, buffers, (step,), note)


def history(rng: np.random.Generator, n: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Moments as a few earlier steps with gradients of about ``scale`` would have left them."""
    m = rng.normal(0, scale, n)
    v = m * m + rng.uniform(0.2, 2.0, n) * scale * scale
    return m, v


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(62) if rng is None else rng
    n = int(rng.integers(700, 1500))
    zeros = np.zeros(n)
    m10, v10 = history(rng, 512, 1e-3)
    m1000, v1000 = history(rng, 300, 1e-2)
    mt, vt = history(rng, 256, 1e-8)
    mz, vz = history(rng, 200, 1e-3)
    return (
        _case("worked example step 1 n=2", [0.5, -0.25], [1.0, -0.5], [0, 0], [0, 0],
              hyperparameters(1, lr=0.1), "the example of the description"),
        _case(f"first step n={n}", rng.normal(0, 1e-3, n), rng.normal(0, 0.02, n), zeros, zeros,
              hyperparameters(1), "m = v = 0: bias correction divides by 0.1 and 0.001", rng),
        _case("step 10 n=512", rng.normal(0, 1e-3, 512), rng.normal(0, 0.02, 512), m10, v10,
              hyperparameters(10), "moments with history; bias corrections 0.65 and 0.01", rng),
        _case("step 1000 n=300", rng.normal(0, 1e-2, 300), rng.normal(0, 0.5, 300), m1000, v1000,
              hyperparameters(1000, lr=3e-4), "bias_correction1 is 1.0 in float32, bias_correction2 0.63",
              rng),
        _case("tiny gradients step 5 n=256", rng.normal(0, 1e-8, 256), rng.normal(0, 0.02, 256), mt, vt,
              hyperparameters(5), "sqrt(v) about 1e-8, as large as eps: where eps goes matters", rng),
        _case("zero gradients step 20 n=200", np.zeros(200), rng.normal(0, 0.5, 200), mz, vz,
              hyperparameters(20, weight_decay=0.3), "g = 0 (an unused embedding row): the moments decay, and "
              "w shrinks by decoupled weight decay", rng),
        _case("n=1", [-0.0625], [0.25], [0.01], [0.0004], hyperparameters(3, lr=0.01),
              "one parameter, one thread of 256", rng),
    )


def bench(n: int) -> Case:
    rng = np.random.default_rng(62)
    m, v = history(rng, n, 1e-3)
    return _case(f"bench n={n}", rng.normal(0, 1e-3, n), rng.normal(0, 0.02, n), m, v, hyperparameters(10),
                 "graduate-mode timing", rng)


PUZZLE = Puzzle(
    slug="adamw",
    number=62,
    title="Fused AdamW, fp32 master weights",
    chapter=9,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("adamw_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("p", "w", "m", "v"),
    constraints=(
        *(max_global_reads_per_thread(1, a) for a in ("g", *STATE)),
        *(max_global_writes_per_thread(1, a) for a in ("p", *STATE)),
        max_global_reads_per_thread(0, "p"),
        max_launches(1),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced: 28 bytes per parameter, in whole sectors", (ideal_coalescing(),)),
        Star(3, "float32 arithmetic only, as a GPU optimizer kernel computes", (float32_arithmetic_only(),)),
    ),
    hints=(
        "Widen `g[i]` as in puzzle 57, narrow the new `w` as in puzzle 56 (same shared views, a "
        "`cuda.threadfence_block()` after each store). Keep `w, m, v` in registers: read each once at the "
        "start, write each once at the end.",
        "`one = numba.float32(1.0)`; `mi = beta1 * m[i] + (one - beta1) * grad`; "
        "`vi = beta2 * v[i] + (one - beta2) * grad * grad`; `wi = w[i] * (one - lr * weight_decay)`.",
        "`denom = math.sqrt(vi) / math.sqrt(bias_correction2) + eps`; `wi -= (lr / bias_correction1) * mi / "
        "denom`; then store `w[i], m[i], v[i]` and `p[i] = narrow(wi)`.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-9,
    bench=bench,
)
