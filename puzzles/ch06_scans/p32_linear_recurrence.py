"""Puzzle 32 — Linear recurrence: h_t = a_t * h_(t-1) + b_t as a scan over (a, b) pairs."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    log_step_work,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
    shared_memory_budget,
)

TPB = 64                 # threads per block; every sequence has L <= TPB steps

READING = ("*Mamba: Linear-Time Sequence Modeling with Selective State Spaces* (2023) — Gu, Dao: "
           "section 3.3, the hardware-aware parallel scan")

DESCRIPTION = f"""\
# Puzzle 32 — Linear recurrence (the scan inside Mamba)

A state-space layer such as Mamba carries a hidden state along the sequence:

    h[t] = a[t] * h[t-1] + b[t]        with h[-1] = 0, so h[0] = b[0]

`a[t]` is how much of the past survives step t (a decay, usually between 0 and 1; 0 forgets everything),
`b[t]` is what step t adds. Written as a loop it looks hopelessly sequential. It is a scan in disguise.

**Example:** `a = [0.5, 2, 0, 0.5]`, `b = [1, 1, 3, -2]` gives `h = [1, 3, 3, -0.5]`
(1; 2·1 + 1 = 3; 0·3 + 3 = 3; 0.5·3 − 2 = −0.5).

One step is the map `h -> a·h + b`, written as the pair `(a, b)`. Doing `(a1, b1)` and then `(a2, b2)` is
again such a map:

    (a1, b1) then (a2, b2)  =  (a1·a2,  a2·b1 + b2)

Composition of maps is associative, so an inclusive Hillis-Steele scan (puzzle 28) over the pairs works
with this operator instead of `+`. After the scan, element t holds the map from `h[-1]` to `h[t]`; since
`h[-1] = 0`, its `b` part **is** `h[t]`. Mind the order: the left partner (`t - offset`) is the earlier
map, so it is `(a1, b1)`; the operator is not commutative.

```
pairs:    (a0,b0)  (a1,b1)  (a2,b2)  (a3,b3)
offset 1: (a0,b0)  0..1     1..2     2..3        "i..j" = the maps of steps i to j, composed
offset 2: (a0,b0)  0..1     0..2     0..3        b-part of 0..t = h[t]
```

**What's new:** a scan over a non-commutative operator on pairs, in floating point — the parallel scan that
makes selective state-space models fast on GPUs. The result differs from the sequential loop only by
rounding, so outputs are compared with a tolerance (rtol 1e-4, atol 1e-4).

**Launch:** one block of {TPB} threads per sequence (`grid = number of sequences`); sequence `s` is row `s`
of `a`, `b` and `h` (float32, shape `(sequences, L)`, `L <= {TPB}`), thread `t` owns step `t`. Pad past
`L` with the identity map `(1, 0)`. Each thread reads `a` and `b` once and writes `h` once.

**Read more:** {READING}
"""


def spec(a: np.ndarray, b: np.ndarray, h: np.ndarray, L: int) -> dict[str, np.ndarray]:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    out = np.empty_like(a64)
    state = np.zeros(a.shape[0])
    for t in range(L):                      # a loop over time, vectorised over the sequences
        state = a64[:, t] * state + b64[:, t]
        out[:, t] = state
    return {"h": out.astype(np.float32)}


def _case(name: str, a: np.ndarray, b: np.ndarray, note: str) -> Case:
    a = np.atleast_2d(np.asarray(a, dtype=np.float32))
    b = np.atleast_2d(np.asarray(b, dtype=np.float32))
    sequences, L = a.shape
    h = np.full((sequences, L), np.nan, dtype=np.float32)
    step = LaunchStep("linear_recurrence_kernel", grid=sequences, block=TPB, args=("a", "b", "h", "L"))
    return Case(name, {"a": a, "b": b, "h": h, "L": L}, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 32)
    resets = rng.uniform(0.5, 1.0, (3, TPB))
    resets[:, [0, 5, 31, 32, 50]] = 0.0                     # a = 0 forgets the past: like a segment head
    steps = size(rng, 33, 63, multiple_of=8)     # whole sectors per row: ideal coalescing stays reachable
    signs = rng.uniform(0.6, 1.0, (3, steps)) * rng.choice([-1, 1], (3, steps))
    return (
        _case("worked example L=4", [0.5, 2, 0, 0.5], [1, 1, 3, -2], "the example from the description"),
        _case("decays 4 sequences, L=64", rng.uniform(0.8, 1.0, (4, TPB)), rng.uniform(-1, 1, (4, TPB)),
              "slow decay: every step's b still matters at the end of the sequence"),
        _case(f"mixed signs 3 sequences, L={steps}", signs, rng.uniform(-1, 1, (3, steps)),
              "negative a, L not a multiple of the block: swapping the operator's order fails here"),
        _case("resets 3 sequences, L=64", resets, rng.uniform(0.5, 2.0, (3, TPB)),
              "some a = 0, also at the warp boundary (31, 32): the state must restart there"),
        _case("L=1, 5 sequences", rng.uniform(0.5, 1, (5, 1)), rng.uniform(-1, 1, (5, 1)), "h[0] = b[0]"),
        _case("growth 2 sequences, L=24", rng.uniform(1.0, 1.1, (2, 24)), rng.uniform(0, 1, (2, 24)),
              "a > 1: the state grows, so each partial product a1·a2 must be kept, not just the b's"),
    )


PUZZLE = Puzzle(
    slug="linear-recurrence",
    number=32,
    title="Linear recurrence (selective scan)",
    chapter=6,
    difficulty=5,
    description=DESCRIPTION,
    kernels=("linear_recurrence_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("h",),
    constraints=(
        max_global_reads_per_thread(1, "a"),
        max_global_reads_per_thread(1, "b"),
        max_global_writes_per_thread(1, "h"),
        must_use_shared(),
        shared_memory_budget(4 * TPB * 4),
        no_atomics(),
    ),
    stars=(
        Star(2, "log-step: log2(64) rounds of map composition, not a loop over the past",
             (log_step_work(),)),
        Star(3, "coalesced (thread t loads and stores step t of its row), and no bank conflicts",
             (ideal_coalescing(), no_bank_conflicts())),
    ),
    hints=(
        "Two double-buffered shared arrays, `sa` and `sb`, each (2, 64) float32. Thread t loads "
        "`a[s, t], b[s, t]` into row 0 (or `1.0, 0.0` when `t >= L`), then runs the puzzle-28 loop.",
        "In a step, with `t >= offset`: the left (earlier) map is `(a1, b1) = (sa[src, t - offset], "
        "sb[src, t - offset])`, the right (later) one is your current `(a2, b2)`; the new pair is "
        "`(a1 * a2, a2 * b1 + b2)`.",
        "Write both new values into row `1 - src`, `cuda.syncthreads()`, swap `src`. At the end "
        "`h[s, t] = sb[src, t]` for `t < L`.",
    ),
    reading=READING,
    rtol=1e-4,
    atol=1e-4,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n elements: n / TPB sequences of TPB steps, one block per sequence."""
    rng = np.random.default_rng(8032)
    sequences = max(1, n // TPB)
    a = rng.uniform(0.8, 1.0, (sequences, TPB)).astype(np.float32)
    b = rng.uniform(-1, 1, (sequences, TPB)).astype(np.float32)
    return _case(f"bench {sequences} sequences, L={TPB}", a, b, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
