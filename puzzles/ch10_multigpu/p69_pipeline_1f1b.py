"""Puzzle 69 — A pipeline schedule (1F1B): the schedule as a table the kernels follow, its bubble measured,
activations held within P - p slots."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, Devices, LaunchStep, Puzzle, Star, Sync
from puzzles.rules import max_global_reads_per_thread, no_atomics

from .layout import at, budget
from .rules import no_peer_stores, optimal_makespan, within_link_budget
from .schedules import one_f_one_b, render

MAX_MICRO = 32                   # make_schedule runs one block of 32 threads: one per micro-batch

READING = ("*The Ultra-Scale Playbook* — Hugging Face, section \"Pipeline Parallelism\" (GPipe's all-forward-"
           "all-backward, one-forward-one-backward, the bubble (p - 1) / (m + p - 1)); *Megatron-LM* (2019) — "
           "Shoeybi et al.")

_EXAMPLE = render(one_f_one_b(3, 4))

DESCRIPTION = f"""\
# Puzzle 69 — A pipeline schedule: 1F1B

**Pipeline parallelism** puts consecutive layers on consecutive GPUs: stage `p` runs its layers and hands
its activations to stage `p + 1`; the backward pass hands gradients back. A whole batch would keep one
stage busy while the others wait, so the batch is cut into `M` **micro-batches** that follow each other
through the stages. Which stage does what at each tick is a **schedule** — here a table, `sched@p[t]`:
`m + 1` = forward of micro-batch `m`, `-(m + 1)` = its backward, `0` = idle. Every op takes one tick; the
forward of `m` on stage `p` must come after it on stage `p - 1`, the backward after it on stage `p + 1`
(on the last stage: after its own forward).

**Example:** 1F1B for `P = 3` stages and `M = 4` micro-batches (`F2` = forward of micro-batch 2):

```
{_EXAMPLE}
```

Stage `p` runs `P - 1 - p` warm-up forwards, then alternates one forward and one backward, then drains.
However you order it, `P - 1` of every `M + P - 1` ticks are idle on each stage: the **bubble**,
`(P - 1) / (M + P - 1)` of the time (1/3 above) — more micro-batches shrink it. GPipe (all forwards, then
all backwards) has the same bubble, but stage 0 must keep the activations of all `M` micro-batches until
their backward; 1F1B keeps at most `P - p`. Here each stage's `stash` has exactly `min(M, P - p)` slots:
micro-batch `m` uses slot `m % stash.shape[0]`, which is only safe if no more are in flight.

You write both halves:

1. `make_schedule(sched, stage, stages, micro)` fills stage `stage`'s row of a 1F1B-like table (it starts
   all idle; thread `m` places micro-batch `m`'s two ops). Any valid schedule earns ★; ★★ needs the
   shortest, `2 (M + P - 1)` ticks: the smallest bubble, measured from the ticks in which the stages
   actually worked.
2. `pipeline_tick(sched, tick, prev, act, stash, nxt, grad, w, b, dw, db, stage, stages)` runs on every
   stage at every tick and does what `sched[tick]` says. Each stage is one element-wise affine layer (so
   the kernel stays small and the lesson is the schedule): for micro-batch `m` and feature `i`,
   - forward: `h = prev[m, i]`; `stash[m, i] = h`; `act[m, i] = w[i] * h + b[i]`;
   - backward: `h = stash[m, i]`; the gradient arriving is `g = nxt[m, i]`, except on the last stage,
     where the loss `0.5 (out - target)^2` gives `g = (w[i] * h + b[i]) - nxt[m, i]` (`nxt` is the target
     there); then `dw[i] += g * h`, `db[i] += g`, `grad[m, i] = g * w[i]`.

   Every buffer indexed by micro-batch is a ring of slots: row `m` means row `m % rows` (`rows` =
   `shape[0]`). `act` and `grad` are two-slot buffers that the neighbours read over the link (`prev` is
   the previous stage's `act`, `nxt` the next stage's `grad`): one micro-batch in transit each way, as
   with the send and receive buffers of a real pipeline. The ends of the pipeline use whole arrays: stage
   0's `prev` is the input `x`, its `grad` is `dx` (the gradient of the input); the last stage's `act` is
   the model's output `out`, its `nxt` the `target`. `dw` and `db` start at zero. Checked: `out`, `dx`,
   `dw`, `db`.

**What's new:** the schedule as data: a table that decides what every device does at every tick, and the
idle ticks it leaves (the bubble) measured from the run.

**Launch:** on every stage `p`, `make_schedule(sched@p, p, P, M)` (one block of {MAX_MICRO} threads), then all
stages synchronise; then for `tick = 0 .. 2PM - 1` (room for running the micro-batches one after another),
on every stage `pipeline_tick(...)` with one block of `D` threads (thread `i` = feature `i`), then all
stages synchronise. `M <= {MAX_MICRO}`. Reading a neighbour's activation in the tick it is written is a race
between devices; a slot reused too early is a wrong gradient. Each activation and each gradient crosses
its link once.

**Read more:** {READING}
"""


def spec(**buffers) -> dict[str, np.ndarray]:
    stages = sum(1 for k in buffers if k.startswith("w@"))
    x = buffers[at("x", 0)].astype(np.float64)
    target = buffers[at("target", stages - 1)].astype(np.float64)
    ws = [buffers[at("w", p)].astype(np.float64) for p in range(stages)]
    bs = [buffers[at("b", p)].astype(np.float64) for p in range(stages)]
    hs = [x]
    for p in range(stages):
        hs.append(ws[p] * hs[p] + bs[p])
    g = hs[-1] - target
    out: dict[str, np.ndarray] = {at("out", stages - 1): hs[-1]}
    for p in reversed(range(stages)):
        out[at("dw", p)] = (g * hs[p]).sum(axis=0)
        out[at("db", p)] = g.sum(axis=0)
        g = g * ws[p]
    out[at("dx", 0)] = g
    return {k: v.astype(np.float32) for k, v in out.items()}


def _case(name: str, rng: np.random.Generator, stages: int, micro: int, features: int, note: str) -> Case:
    assert 2 <= stages and 1 <= micro <= MAX_MICRO and features <= 1024
    ticks = 2 * stages * micro
    buffers: dict = {at("x", 0): rng.normal(0.5, 1.0, (micro, features)).astype(np.float32),
                     at("target", stages - 1): rng.normal(0, 1, (micro, features)).astype(np.float32),
                     at("out", stages - 1): np.full((micro, features), np.nan, np.float32),
                     at("dx", 0): np.full((micro, features), np.nan, np.float32)}
    for p in range(stages):
        buffers[at("sched", p)] = np.zeros(ticks, np.int32)
        buffers[at("w", p)] = (rng.uniform(0.5, 1.5, features) * rng.choice([-1, 1], features)).astype(np.float32)
        buffers[at("b", p)] = rng.normal(0, 0.5, features).astype(np.float32)
        if p < stages - 1:    # two-slot transit buffers between neighbours
            buffers[at("act", p)] = np.full((2, features), np.nan, np.float32)
        if p > 0:
            buffers[at("grad", p)] = np.full((2, features), np.nan, np.float32)
        buffers[at("stash", p)] = np.full((min(micro, stages - p), features), np.nan, np.float32)
        buffers[at("dw", p)] = np.zeros(features, np.float32)
        buffers[at("db", p)] = np.zeros(features, np.float32)
    steps: list = [LaunchStep("make_schedule", 1, MAX_MICRO, (at("sched", p), p, stages, micro), device=p)
                   for p in range(stages)]
    steps.append(Sync())
    for t in range(ticks):
        for p in range(stages):
            prev = at("x", 0) if p == 0 else at("act", p - 1)
            act = at("out", p) if p == stages - 1 else at("act", p)
            nxt = at("target", p) if p == stages - 1 else at("grad", p + 1)
            grad = at("dx", 0) if p == 0 else at("grad", p)
            steps.append(LaunchStep("pipeline_tick", 1, features,
                                    (at("sched", p), t, prev, act, at("stash", p), nxt, grad, at("w", p),
                                     at("b", p), at("dw", p), at("db", p), p, stages), device=p))
        steps.append(Sync())
    row = features * micro * 4              # one activation (or gradient) per micro-batch crosses each link
    ideal = budget([(p - 1, p, row) for p in range(1, stages)] + [(p + 1, p, row) for p in range(stages - 1)])
    return Case(name, buffers, tuple(steps), note,
                devices=Devices(stages, "ring", ideal, ideal_rounds=2 * (micro + stages - 1)))


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(69) if rng is None else rng
    worked = _case("worked example P=3 M=4", np.random.default_rng(690), 3, 4, 8,
                   "the table of the description: bubble 1/3, stash slots 3, 2, 1")
    features = int(rng.integers(20, 64))
    return (
        worked,
        _case(f"P=4 M=8 D={features}", rng, 4, 8, features, "twice as many micro-batches as stages: bubble "
              "3/11; stage 0 may hold 4 of them, not 8"),
        _case("P=2 M=5 D=32", rng, 2, 5, 32, "two stages: bubble 1/6; stage 1 holds one micro-batch at a time"),
        _case("P=4 M=2 D=16", rng, 4, 2, 16, "fewer micro-batches than stages: bubble 3/5, and no stage ever "
              "holds more than 2"),
        _case("P=3 M=1 D=8", rng, 3, 1, 8, "one micro-batch: no pipelining possible, bubble 2/3"),
    )


def bench(n: int, ranks: int = 4) -> Case:
    """16 micro-batches of about n / 16 features through ``ranks`` stages (how many GPUs a run has)."""
    features = min(1024, max(32, n // 16))
    return _case(f"bench P={ranks} M=16 D={features}", np.random.default_rng(69), ranks, 16, features,
                 f"graduate-mode timing: 16 micro-batches through {ranks} stages")


PUZZLE = Puzzle(
    slug="pipeline-1f1b",
    number=69,
    title="Pipeline schedule: 1F1B",
    chapter=10,
    difficulty=5,
    description=DESCRIPTION,
    kernels=("make_schedule", "pipeline_tick"),
    spec=spec,
    make_cases=make_cases,
    outputs=("out", "dx", "dw", "db"),
    scratch=("sched", "act", "stash", "grad"),   # written by the kernels, not judged
    constraints=(
        max_global_reads_per_thread(1, "prev"),
        max_global_reads_per_thread(1, "nxt"),
        within_link_budget("a pipeline (one activation and one gradient per micro-batch)"),
        no_atomics(),
        no_peer_stores(),
    ),
    stars=(
        Star(2, "the smallest bubble: 2(M + P - 1) ticks", (optimal_makespan("pipeline_tick"),)),
    ),
    hints=(
        "In `pipeline_tick`: `op = sched[tick]`; return if `op == 0` or `i >= w.size`; `m = op - 1` for a "
        "forward, `m = -op - 1` for a backward; row `m` of any buffer `a` is `a[m % a.shape[0], i]`. In "
        "`make_schedule`, thread `m` (if "
        "`m < micro`) writes `sched[tick_of_forward] = m + 1` and `sched[tick_of_backward] = -(m + 1)`.",
        "A schedule that runs micro-batch after micro-batch is valid: forward of `m` on stage `p` at tick "
        "`2 P m + p`, its backward at `2 P m + 2 P - 1 - p` (★). For 1F1B, the backward of `m` on stage `p` "
        "is at `2 P - 1 - p + 2 m`: the last stage alternates F, B from tick `P - 1`, and each stage's "
        "backward follows the next stage's by one tick.",
        "1F1B: forward at `p + m` while `m < P - p` (warm-up), else at `2 m + p` (one tick after the backward "
        "of `m - (P - p)` frees its slot); backward at `2 P - 1 - p + 2 m`. Forwards fall on ticks of one "
        "parity and backwards on the other, so they never collide.",
    ),
    reading=READING,
    rtol=1e-5,
    atol=1e-5,
    bench=bench,
)
