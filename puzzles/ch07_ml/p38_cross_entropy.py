"""Puzzle 38 — Cross-entropy: per-row loss = logsumexp(logits) - logits[target], stable, one block per row."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    must_use_shared,
    no_atomics,
    no_bank_conflicts,
)

TPB = 64
MAX_COLS = 256
ITEMS = MAX_COLS // TPB

READING = ("*Let's reproduce GPT-2 (124M)* — Andrej Karpathy: the loss at the end of the forward pass "
           "(`F.cross_entropy` on the logits), and why llm.c fuses it with the softmax")

DESCRIPTION = f"""\
# Puzzle 38 — Cross-entropy loss

A language model ends with a row of logits per position, one per vocabulary entry, and the index of the
token that actually came next. The training loss for that row is the negative log-probability of the target:

    loss[r] = -log softmax(logits[r])[target[r]]
            = logsumexp(logits[r]) - logits[r, target[r]]
    logsumexp(v) = m + log( sum_j exp(v[j] - m) )        with m = max_j v[j]

**Example:** logits `[2, 1, 0.5, -1]`, target 0: `m = 2`, `sum exp(v - m) = 1 + 0.3679 + 0.2231 + 0.0498 =
1.6408`, `logsumexp = 2 + log(1.6408) = 2.4952`, `loss = 2.4952 - 2 = 0.4952`. With target 3 the loss is
`2.4952 + 1 = 3.4952`: a confident wrong prediction costs a lot.

Never form the probabilities: `exp(logit)` overflows float32 above about 88.7, and `log(softmax)` of a
tiny probability loses everything. The max-shifted form above stays exact-ish for any logits; one case has
logits near 500.

```
block r:  threads stride over the row ──► (max, sum exp) per thread ──► merge in shared memory
          one thread: loss[r] = m + log(s) - logits[r, target[r]]
```

**What's new:** combining a reduction with a gather (`logits[r, target[r]]`), and producing one number per row
from a whole block. The online `(max, sum)` pair of puzzle 34 lets you do it in one pass over the row (★★).

**Launch:** one block of {TPB} threads per row; `logits` float32 `(rows, cols)` with `cols <= {MAX_COLS}`,
`targets` int32 `(rows,)`, `loss` float32 `(rows,)`. At most {2 * ITEMS + 1} reads of `logits` per thread
(two passes plus the target), one read of `targets` and one write of `loss`. ★★: at most {ITEMS + 1} reads
of `logits` (one pass). Tolerance: rtol 1e-5, atol 1e-5.

**Read more:** {READING}
"""


def spec(logits: np.ndarray, targets: np.ndarray, loss: np.ndarray) -> dict[str, np.ndarray]:
    v = logits.astype(np.float64)
    m = v.max(axis=1)
    lse = m + np.log(np.exp(v - m[:, None]).sum(axis=1))
    picked = v[np.arange(v.shape[0]), targets]
    return {"loss": (lse - picked).astype(np.float32)}


def _case(name: str, logits: np.ndarray, targets: np.ndarray, note: str) -> Case:
    logits = np.asarray(logits, dtype=np.float32)
    targets = np.asarray(targets, dtype=np.int32)
    rows, cols = logits.shape
    assert cols <= MAX_COLS and targets.shape == (rows,) and ((0 <= targets) & (targets < cols)).all()
    loss = np.full(rows, np.nan, dtype=np.float32)
    step = LaunchStep("cross_entropy_kernel", grid=rows, block=TPB, args=("logits", "targets", "loss"))
    return Case(name, {"logits": logits, "targets": targets, "loss": loss}, (step,), note)


HUGE_MARGIN = 16.0


def _below_the_max(logits: np.ndarray, targets: list[int]) -> np.ndarray:
    """``logits`` with each row's target logit lowered, where needed, to ``HUGE_MARGIN`` below the row's other
    logits' maximum.

    With logits near 500, ``m + log(s)`` is rounded to float32's step there (6.1e-5, error up to 3.1e-5)
    before the target's logit is subtracted. Where the target is (nearly) the row's maximum the loss is small
    (0.005 at check seed 359, target the maximum) and the tolerance is about atol = 1e-5: the reference itself
    failed at check seeds 17, 171, 261 and 359 (1.3 % of seeds). With the target 16 below the maximum the loss
    is >= 16 and the tolerance >= 1.7e-4, over five times that rounding."""
    logits = np.asarray(logits, dtype=np.float32).copy()
    for r, t in enumerate(targets):
        others = np.delete(logits[r], t).max()
        logits[r, t] = min(logits[r, t], others - np.float32(HUGE_MARGIN))
    return logits


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 38)
    rows, cols = size(rng, 3, 8), size(rng, 8, 56, multiple_of=8)
    confident = rng.normal(0, 1, (4, 200))
    confident[np.arange(4), [7, 199, 64, 130]] += 12.0       # the model is sure of one token per row
    return (
        _case("worked example 2x4", [[2, 1, 0.5, -1], [2, 1, 0.5, -1]], [0, 3],
              "the example from the description, with targets 0 and 3"),
        _case("random 6x64", rng.normal(0, 2, (6, 64)), rng.integers(0, 64, 6), "one column per thread"),
        _case("confident 4x200", confident, [7, 199, 64, 0],
              "rows 0-2 predict their target (small loss), row 3 does not (large loss); "
              "targets at both ends"),
        _case("huge logits 3x256", _below_the_max(rng.normal(500, 20, (3, 256)), [255, 0, 128]), [255, 0, 128],
              "logits near 500: exp without the max overflows float32 (each target's logit is at least "
              f"{HUGE_MARGIN:g} below its row's maximum, so the loss is large enough for float32 at 500)"),
        _case("very negative 4x40", rng.normal(-150, 10, (4, 40)), rng.integers(0, 40, 4),
              "logits near -150: with a max that starts at 0 instead of -inf every exp underflows to 0"),
        _case("one column 4x1", rng.normal(0, 5, (4, 1)), np.zeros(4),
              "a single class: every loss is exactly 0"),
        _case(f"random {rows}x{cols}", rng.normal(-3, 4, (rows, cols)), rng.integers(0, cols, rows),
              "fewer columns than threads"),
    )


PUZZLE = Puzzle(
    slug="cross-entropy",
    number=38,
    title="Cross-entropy loss",
    chapter=7,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("cross_entropy_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("loss",),
    constraints=(
        max_global_reads_per_thread(2 * ITEMS + 1, "logits"),
        max_global_reads_per_thread(1, "targets"),
        max_global_writes_per_thread(1, "loss"),
        must_use_shared(),
        no_atomics(),
    ),
    stars=(
        Star(2, "one pass over the logits: a running (max, sum) per thread",
             (max_global_reads_per_thread(ITEMS + 1, "logits"),)),
        Star(3, "coalesced, and no bank conflicts in the merge", (ideal_coalescing(), no_bank_conflicts())),
    ),
    hints=(
        "Every thread folds its columns into `(m, s)` as in puzzle 34: `m_new = max(m, v)`, "
        "`s = s * exp(m - m_new) + exp(v - m_new)`. A thread with no columns keeps `(-inf, 0)`.",
        "Merge the pairs in two shared arrays with a tree; skip the merge when the other side's max is -inf "
        "(and copy it when yours is).",
        "Thread 0 alone finishes: `loss[r] = sm[0] + math.log(ss[0]) - logits[r, targets[r]]`.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-5,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n logits: rows of MAX_COLS classes (the most the puzzle allows), one block per row."""
    rng = np.random.default_rng(8038)
    cols = min(MAX_COLS, n)
    rows = max(1, n // cols)
    logits = rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(2)
    return _case(f"bench {rows}x{cols}", logits, rng.integers(0, cols, rows), "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
