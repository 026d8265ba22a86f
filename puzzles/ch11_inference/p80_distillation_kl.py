"""Puzzle 80 — Distillation loss: the temperature-scaled KL divergence between a teacher's and a student's
softmax, and its gradient, from max-shifted log-softmaxes in one block per row."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    no_atomics,
)

TPB = 128                # threads per block: one block per row
V_MAX = 1024             # the longest row among the cases
ITEMS = V_MAX // TPB     # 8 logits of each model per thread
SPIKE = 300.0            # a spike case's lead: 150 after T = 2, so exp(spike - a missed maximum) overflows (past 88)
SPIKE_STUDENT = (TPB - 1, 3 * TPB - 1, 6 * TPB - 1, V_MAX - 1)       # thread 127 of rounds 0, 2, 5, 7
SPIKE_TEACHER = (2 * TPB - 2, TPB - 2, 7 * TPB - 2, 4 * TPB - 2)     # thread 126 of rounds 1, 0, 6, 3

READING = ("*Distilling the Knowledge in a Neural Network* (2015) — Hinton, Vinyals, Dean, section 2 (soft "
           "targets at a high temperature, and why the gradient is scaled by T^2)")

DESCRIPTION = f"""\
# Puzzle 80 — Distillation loss

A small **student** model learns to imitate a large **teacher** by matching its whole output distribution,
not just the right answer: the teacher's *wrong* guesses carry information (a "7" that looks a bit like a
"1"). Both distributions are softened with a **temperature** `T > 1` so that the small probabilities
matter, and the loss is the Kullback-Leibler divergence from teacher to student:

    log_p_s = log_softmax(student / T),    log_p_t = log_softmax(teacher / T),    p_t = exp(log_p_t)
    loss[b] = T^2 * sum_i p_t[i] * (log_p_t[i] - log_p_s[i])
    grad[b, i] = d loss[b] / d student[b, i] = T * (p_s[i] - p_t[i])

The factor `T^2` keeps the gradient's size independent of `T` (each softmax divides by `T`, and the
derivative brings one more `1/T`); without it, raising `T` would quietly shrink the distillation term
against the ordinary loss it is mixed with. The batch loss is the mean of `loss` over rows.

**Never take the log of a probability.** `log_softmax(x) = x - m - log(sum exp(x - m))` with
`m = max x` is exact to float32 rounding however small the probability; `log(exp(x - m) / Z)` is `log(0)
= -inf` as soon as `exp` underflows (`x - m < -104` in float32), and `0 * -inf` is NaN. One case has
teacher logits 300 apart at `T = 1`.

**Example** (one row, `T = 2`): `student = [1, 2, 0, -1]`, `teacher = [2, 1, 0, -2]`:

```
teacher / T = [1, .5, 0, -1]     log_p_t = [-.7466, -1.2466, -1.7466, -2.7466]   p_t = [.474 .287 .174 .064]
student / T = [.5, 1, 0, -.5]    log_p_s = [-1.2873, -.7873, -1.7873, -2.2873]   p_s = [.276 .455 .167 .102]
KL = sum p_t * (log_p_t - log_p_s) = .1019;   loss = 4 * .1019 = .4078
grad = 2 * (p_s - p_t) = [-.3960, .3351, -.0139, .0748]
```

```
block b, thread t: s[r] = student[b, t + {TPB}r] / T,  tt[r] = teacher[b, t + {TPB}r] / T     (r = 0..{ITEMS - 1})
   max s, max tt  ──block max──►  ms, mt
   sum exp(s - ms), sum exp(tt - mt)  ──block sum──►  lse_s = ms + log Zs,  lse_t = mt + log Zt
   each element: ls = s - lse_s, lt = tt - lse_t, pt = exp(lt):  grad = T (exp(ls) - pt),  term = pt (lt - ls)
   sum of terms  ──block sum──►  thread 0: loss[b] = T^2 * sum
```

**What's new:** two row-wise reductions (a max and a sum of exponentials per model) feeding a third (the
KL sum), fused with the elementwise gradient — the loss is a reduction of log-softmaxes, never of
probabilities.

**Launch:** one block of {TPB} threads per row; thread `t` owns columns `t, t + {TPB}, ...` (`V <= {V_MAX}`;
4, or a multiple of 8). `temperature` is a float32 scalar. Rules: at most {2 * ITEMS} reads of `student` and
of `teacher` per thread (two passes over the row fit), each output element written once. ★★: one pass — at
most {ITEMS} reads of each (keep your logits in a `cuda.local.array`). ★★★: coalesced loads and stores.
Tolerances: rtol 1e-4, atol 2e-5. One case has `logits / T` near 120, where one float32 step is 7.6e-6:
`log_p` computed from such numbers carries an error of a few steps, and so does a gradient entry where
`p_s` and `p_t` nearly cancel. Elsewhere the error is about 1e-7 of each term, far inside the tolerance; a
missing `T` or `T^2` is off by a factor of 2 to 16.

**Read more:** {READING}
"""


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def spec(student: np.ndarray, teacher: np.ndarray, temperature: float, loss: np.ndarray,
         grad: np.ndarray) -> dict[str, np.ndarray]:
    t = float(temperature)
    log_ps, log_pt = log_softmax(student / t), log_softmax(teacher / t)
    pt = np.exp(log_pt)
    kl = (pt * (log_pt - log_ps)).sum(axis=-1)
    return {"loss": (t * t * kl).astype(np.float32), "grad": (t * (np.exp(log_ps) - pt)).astype(np.float32)}


def _case(name: str, student: np.ndarray, teacher: np.ndarray, temperature: float, note: str) -> Case:
    student = np.asarray(student, dtype=np.float32)
    teacher = np.asarray(teacher, dtype=np.float32)
    rows, v = student.shape
    assert teacher.shape == student.shape and v <= V_MAX and (v % 8 == 0 or 32 % (4 * v) == 0)
    buffers = {
        "student": student, "teacher": teacher, "temperature": np.float32(temperature),
        "loss": np.full(rows, np.nan, np.float32), "grad": np.full((rows, v), np.nan, np.float32),
    }
    step = LaunchStep("distill_kl", grid=rows, block=TPB, args=("student", "teacher", "temperature", "loss", "grad"))
    return Case(name, buffers, (step,), note)


def _pair(rng: np.random.Generator, rows: int, v: int, spread: float, agreement: float) -> tuple[np.ndarray, ...]:
    """A teacher and a student that agree in part: student = agreement * teacher + noise."""
    teacher = rng.normal(0, spread, (rows, v))
    student = agreement * teacher + rng.normal(0, spread * (1 - agreement) + 0.3, (rows, v))
    return student, teacher


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(80) if rng is None else rng
    example_s = np.array([[1, 2, 0, -1]], np.float32)
    example_t = np.array([[2, 1, 0, -2]], np.float32)
    underflow_s, underflow_t = _pair(rng, 4, 512, 2.0, 0.5)
    underflow_t[:, :8] += 300.0                   # a few teacher logits 300 above the rest: p_t underflows to 0
    underflow_s[:, 3] += 40.0
    spike_s, spike_t = _pair(rng, 4, V_MAX, 1.0, 0.5)
    for r, (cs, ct) in enumerate(zip(SPIKE_STUDENT, SPIKE_TEACHER)):
        spike_s[r, cs] += SPIKE
        spike_t[r, ct] += SPIKE
    return (
        _case("worked example and a perfect student", np.vstack([example_s, example_t]),
              np.vstack([example_t, example_t]), 2.0,
              "row 0: the description's example; row 1: student = teacher, so loss and gradient are 0"),
        _case("random V=1000, T=2", *_pair(rng, 6, 1000, 2.0, 0.7), 2.0, "a partly trained student"),
        _case("T=4, V=1024", *_pair(rng, 5, 1024, 3.0, 0.5), 4.0, "T^2 = 16: forgetting it is far off"),
        _case("T=1, underflowing teacher", underflow_s, underflow_t, 1.0,
              "p_t is exactly 0 for all but 8 columns: log(p_t) would be -inf and 0 * -inf NaN"),
        _case("large logits, T=0.5", *(x + 60.0 for x in _pair(rng, 3, 256, 3.0, 0.6)), 0.5,
              "logits near 60, so logits / T near 120: exp overflows unless the maximum is subtracted"),
        _case("V=8, close models", *_pair(rng, 7, 8, 1.0, 0.98), 3.0,
              "tiny rows (most threads own nothing) and a KL close to 0"),
        _case("one spike per model in a late thread V=1024", spike_s, spike_t, 2.0,
              f"per row, a student logit {SPIKE:g} above the rest in thread {TPB - 1} of its round and a teacher "
              f"logit {SPIKE:g} above the rest in thread {TPB - 2}: a block maximum that misses either thread "
              "leaves exp(x - max) to overflow"),
    )


def bench(n: int) -> Case:
    """About n logits of each model: n / 1024 rows of a 1024-entry vocabulary."""
    rows = max(1, n // V_MAX)
    return _case(f"bench {rows} rows", *_pair(np.random.default_rng(80), rows, V_MAX, 2.0, 0.7), 2.0,
                 "graduate-mode timing")


PUZZLE = Puzzle(
    slug="distillation-kl",
    number=80,
    title="Distillation loss",
    chapter=11,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("distill_kl",),
    spec=spec,
    make_cases=make_cases,
    outputs=("loss", "grad"),
    constraints=(
        max_global_reads_per_thread(2 * ITEMS, "student"),
        max_global_reads_per_thread(2 * ITEMS, "teacher"),
        max_global_writes_per_thread(1, "loss"),
        max_global_writes_per_thread(ITEMS, "grad"),
        no_atomics(),
    ),
    stars=(
        Star(2, f"one pass: at most {ITEMS} reads of student and of teacher per thread",
             (max_global_reads_per_thread(ITEMS, "student"), max_global_reads_per_thread(ITEMS, "teacher"))),
        Star(3, "coalesced loads and stores", (ideal_coalescing(),)),
    ),
    hints=(
        f"Per thread: `s = cuda.local.array({ITEMS}, numba.float32)` and `tt` likewise, holding "
        "`student[b, i] / T` and `teacher[b, i] / T` for `i = t + r * TPB` (-inf past V). Block maxima "
        "`ms`, `mt`, then block sums of `exp(s - ms)` and `exp(tt - mt)`: `lse_s = ms + log(Zs)`.",
        "Then per element `ls = s - lse_s`, `lt = tt - lse_t`, `pt = exp(lt)`: the KL term is "
        "`pt * (lt - ls)` (0 when pt underflows: fine, never NaN) and `grad = T * (exp(ls) - pt)`.",
        "One more block sum of the KL terms; thread 0 writes `loss[b] = T * T * kl`. A device function "
        "`block_sum(red, x, t)` / `block_max(red, x, t)` with a barrier before it returns (the buffer is "
        "reused) keeps the kernel short.",
    ),
    reading=READING,
    rtol=1e-4,
    atol=2e-5,
    bench=bench,
)
