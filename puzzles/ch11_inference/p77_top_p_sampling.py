"""Puzzle 77 — Top-p (nucleus) sampling without sorting: the probability threshold found bit by bit (a
radix select over the logits' bit patterns), then a draw in vocabulary order with a block scan."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    shared_memory_budget,
)

from .sampling import MARGIN, draw, uniform_for, uniforms_for

V_MAX = 1024             # the largest vocabulary among the cases
TPB = 256                # threads per block
ITEMS = V_MAX // TPB     # 4 logits per thread, kept in registers
SPIKE = 600.0            # a spike case's logit: (600 - max) / T overflows float32's exp (past 88) for every T
SPIKE_AT = (TPB - 1, 2 * TPB - 2, 3 * TPB - 3, V_MAX - 24)  # threads 255, 254, 253, 232 of their rounds
SHARED_BUDGET = 3072     # bytes: room for reductions and a scan, not for the row (4096 bytes of logits alone)
SENTINEL = -7

READING = ("*The Curious Case of Neural Text Degeneration* (2019) — Holtzman et al., section 3.1 (nucleus "
           "sampling)")

DESCRIPTION = f"""\
# Puzzle 77 — Top-p sampling

**Top-p** (nucleus) sampling keeps the most likely tokens until their probability adds up to `p`, so the
set is small when the model is sure and large when it is not. With `w_i = exp((logit_i - max) / T)` and
`Z = sum w_i`:

1. order the tokens by logit, largest first; the **boundary** token is the first whose running sum of `w`
   reaches `top_p * Z`; its logit is the threshold `tau`;
2. the nucleus is **every** token with `logit >= tau` — tokens tied with the boundary are all kept;
   `kept[b]` = its size;
3. draw among the nucleus with the given uniform `u`, walking it **in vocabulary order** (token id 0, 1, 2,
   ...): the token is the first nucleus token whose running sum of `w` exceeds `u * (sum of w over the
   nucleus)`. Any fixed order gives the same distribution; this one needs no sort.

The cases keep `top_p * Z` and `u * mass` at least 0.1% of the total away from every running sum, so
float32 rounding cannot move the boundary or the draw; `top_p` is in (0, 1).

**Example:** logits `[2, 1, 3, 0.5, 1, -1, 2, 0]`, `T = 1`, `top_p = 0.85`, `u = 0.8`. Probabilities by id:
`[.171, .063, .464, .038, .063, .008, .171, .023]`. In logit order the running sums are `.464 (id 2), .634
(id 0), .805 (id 6), .868 (id 1)`: id 1 reaches 0.85, so `tau = 1`, and id 4 (also 1) joins it: the
nucleus is ids `{{0, 1, 2, 4, 6}}`, `kept = 5`, mass `.930`. In id order its running sums are `.171, .233,
.697, .760, .930`; `u * .930 = .744`: **token 4**.

**The catch:** a row of {V_MAX} logits does not fit in this puzzle's {SHARED_BUDGET} bytes of shared memory, so
puzzle 76's sort is out. Find `tau` instead as the largest value whose "mass at or above it"
`f(x) = sum of w_i over logit_i >= x` still reaches `top_p * Z`: `f` only falls as `x` grows, so `x` can be
built **one bit at a time**, from the top bit down, each bit one block-wide sum — 32 sums, no sort.

Bits of what? A float's bit pattern orders like the float if you fix the sign. `logit_bits` holds the same
32 bits as `logits`, as int32 (a second view of one buffer; CUDA C would cast the pointer):

```
bits >= 0 (a positive float):  key = bits + 2**31      larger float -> larger key
bits <  0 (a negative float):  key = -1 - bits         larger magnitude -> smaller key
prefix = 0
for bit = 31 down to 0:        cand = prefix | (1 << bit)
                               if  sum of w_i with key_i >= cand  >=  top_p * Z:   prefix = cand
tau = the logit whose key is prefix;  the nucleus is  key_i >= prefix
```

**What's new:** a radix select — selection by a threshold found bit by bit with block reductions, where a
sort would need memory the block does not have.

**Launch:** one block of {TPB} threads per row; thread `t` owns logits `t, t + {TPB}, t + {2 * TPB}, t + {3 * TPB}`
(kept in registers; `V <= {V_MAX}`, a multiple of 8). Per row: `temperature`, `top_p`, `u`; outputs `token`
and `kept` (int32). Rules: at most {ITEMS} reads of `logits` and of `logit_bits` per thread, at most
{SHARED_BUDGET} bytes of shared memory; the sample in vocabulary order is four block scans of {TPB} values, one
per item. ★★: coalesced loads.

**Read more:** {READING}
"""


def weights(row: np.ndarray, temperature: float) -> np.ndarray:
    row = row.astype(np.float64)
    return np.exp((row - row.max()) / float(temperature))


def nucleus(row: np.ndarray, temperature: float, top_p: float) -> np.ndarray:
    """A boolean mask of the nucleus: every token whose logit is at least the boundary token's."""
    w = weights(row, temperature)
    order = np.lexsort((np.arange(row.size), -row.astype(np.float64)))
    boundary = order[int(np.argmax(np.cumsum(w[order]) >= top_p * w.sum()))]
    return row >= row[boundary]


def spec(logits: np.ndarray, logit_bits: np.ndarray, temperature: np.ndarray, top_p: np.ndarray, u: np.ndarray,
         token: np.ndarray, kept: np.ndarray) -> dict[str, np.ndarray]:
    tok = np.empty(token.shape, dtype=np.int32)
    size = np.empty(kept.shape, dtype=np.int32)
    for b, row in enumerate(logits):
        inside = nucleus(row, temperature[b], top_p[b])
        ids = np.flatnonzero(inside)                     # vocabulary order
        size[b] = ids.size
        tok[b] = ids[draw(weights(row, temperature[b])[ids], float(u[b]))]
    return {"token": tok, "kept": size}


def top_p_for(rng: np.random.Generator, row: np.ndarray, temperature: float, near: int | None = None,
              tied: bool = False) -> np.float32:
    """A top_p whose boundary falls in one run of equal logits (runs in logit order): the usable run nearest
    to ``near``, or a random one; with ``tied``, only runs of two or more equal logits. Usable: the run's
    interval of running sums is wide enough to put top_p at least MARGIN of the total inside it."""
    w = weights(row, temperature)
    values, counts = np.unique(row.astype(np.float64), return_counts=True)
    values, counts = values[::-1], counts[::-1]                  # largest first
    ends = np.cumsum([w[row == v].sum() for v in values]) / w.sum()
    starts = np.concatenate([[0.0], ends[:-1]])
    usable = (ends - starts > 4 * MARGIN) & (ends < 1 - 2 * MARGIN) & (counts >= (2 if tied else 1))
    runs = np.flatnonzero(usable)
    assert runs.size, "no run of this row can hold the boundary safely"
    run = int(rng.choice(runs)) if near is None else int(runs[np.argmin(np.abs(runs - near))])
    return np.float32(rng.uniform(starts[run] + 2 * MARGIN, ends[run] - 2 * MARGIN))


def _case(name: str, rng: np.random.Generator, logits: np.ndarray, note: str, temperature=None, top_p=None,
          u=None, near=None, tied: bool = False) -> Case:
    logits = np.asarray(logits, dtype=np.float32)
    rows, v = logits.shape
    assert v <= V_MAX and v % 8 == 0 and not np.any((logits == 0) & np.signbit(logits)), "no -0.0"
    temperature = rng.uniform(0.5, 1.5, rows).astype(np.float32) if temperature is None else temperature
    temperature = np.asarray(temperature, dtype=np.float32)
    if top_p is None:
        near = [None] * rows if near is None else near
        top_p = [top_p_for(rng, r, t, n, tied) for r, t, n in zip(logits, temperature, near)]
    top_p = np.asarray(top_p, dtype=np.float32)
    if u is None:
        u = []
        for row, t, p in zip(logits, temperature, top_p):
            u.append(uniform_for(rng, weights(row, t)[nucleus(row, t, p)]))
    buffers = {
        "logits": logits,
        "logit_bits": logits.view(np.int32).copy(),
        "temperature": temperature,
        "top_p": top_p,
        "u": np.asarray(u, dtype=np.float32),
        "token": np.full(rows, SENTINEL, dtype=np.int32),
        "kept": np.full(rows, SENTINEL, dtype=np.int32),
    }
    step = LaunchStep("top_p_sample", grid=rows, block=TPB,
                      args=("logits", "logit_bits", "temperature", "top_p", "u", "token", "kept"))
    return Case(name, buffers, (step,), note)


EXAMPLE_LOGITS = [2.0, 1.0, 3.0, 0.5, 1.0, -1.0, 2.0, 0.0]


def _adjacent(rng: np.random.Generator, rows: int, v: int, at: tuple[int, ...], parity: tuple[int, ...]) -> np.ndarray:
    """Random logits where, in row r, the (at[r] + 1)-th largest has a key K of parity ``parity[r]`` (1: odd;
    moved by one ulp if need be) and the next one is the float just below it: keys K and K - 1."""
    x = rng.normal(0, 2, (rows, v)).astype(np.float32)
    for r, n in enumerate(at):
        order = np.argsort(-x[r])
        bits = int(x[r, order[n]].view(np.int32))
        key = bits + 2 ** 31 if bits >= 0 else -1 - bits
        if key % 2 != parity[r]:
            x[r, order[n]] = np.int32(bits ^ 1).view(np.float32)
        x[r, order[n + 1]] = np.nextafter(x[r, order[n]], np.float32(-np.inf))
    return x


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(77) if rng is None else rng
    example = np.tile(np.float32(EXAMPLE_LOGITS), (4, 1))
    ties = np.round(rng.normal(0, 2, (6, 296)) * 2) / 2
    ties[ties == 0] = 0.25                                       # no zeros (and so no -0.0)
    large = rng.normal(0, 80, (4, 704))
    for row in large:                                            # a cluster of near-top logits to choose among
        row[rng.choice(704, 8, replace=False)] = 450 - rng.uniform(0, 1.5, 8)
    negative = rng.normal(-12, 2, (5, 512))
    mixed = rng.normal(-1, 1.5, (5, 1024))
    spike = rng.normal(-1, 1, (4, V_MAX))
    for row, at in zip(spike, SPIKE_AT):
        row[at] = SPIKE
    return (
        _case("worked example, 4 settings", rng, example, "row 0 is the description's example (token 4, "
              "kept 5); then top_p 0.3 (just id 2), 0.5 (ids 0, 2, 6: a tie kept whole) and 0.95 (six tokens)",
              temperature=[1, 1, 1, 1], top_p=[0.85, 0.3, 0.5, 0.95], u=[0.8, 0.5, 0.1, 0.95]),
        _case("random V=1000", rng, rng.normal(0, 2, (6, 1000)), "24 slots past V in the last round of items"),
        _case("ties at the boundary V=296", rng, ties, "logits in steps of 0.5; the boundary falls in a run of "
              "equal logits, all of which are kept", tied=True),
        _case("negative logits V=512", rng, negative, "every logit negative: their bit patterns order backwards "
              "unless the key is fixed"),
        _case("mixed signs V=1024", rng, mixed, "boundaries from the first run to the twentieth",
              near=[0, 1, 3, 8, 20]),
        _case("large logits, low temperature V=704", rng, large,
              "logits in the hundreds, temperature 0.2-0.5: exp needs the maximum subtracted",
              temperature=rng.uniform(0.2, 0.5, 4)),
        _case("one spike in a late thread V=1024", rng, spike,
              f"one logit {SPIKE:g} per row, in a thread near its block's end (the others near -1): every weight "
              "but the spike's is e^-400 or less, so it is the token and the nucleus; a maximum that misses it "
              "leaves exp(logit - max) to overflow", top_p=[0.3, 0.5, 0.7, 0.9]),  # inside the spike's
        # interval of running sums, [0, 1 - e^-400): far from both its ends (top_p_for keeps clear of the last)
        _case("adjacent floats at the boundary V=64", rng, _adjacent(rng, 4, 64, (1, 4, 9, 3), (1, 1, 1, 0)),
              "the last kept logit and the first dropped one are neighbouring floats (keys K and K - 1, K odd in "
              "rows 0-2 and even in row 3): the key search must decide every bit, down to bit 0, from prefix 0",
              near=[1, 4, 9, 3]),
    )


def bench(n: int) -> Case:
    """About n logits: n / 1024 rows of a 1024-token vocabulary."""
    rows = max(1, n // V_MAX)
    rng = np.random.default_rng(77)
    logits = rng.normal(0, 2, (rows, V_MAX)).astype(np.float32)
    temperature = rng.uniform(0.5, 1.5, rows).astype(np.float32)
    # every row at once, with the margins of the cases: top_p inside one token's interval of the running
    # sums in logit order (so inside one run of equal logits, and below 1 - 2 MARGIN); u inside one
    # interval of the nucleus, in vocabulary order (the boundary token's is wide: it was chosen so)
    row64 = logits.astype(np.float64)
    w = np.exp((row64 - row64.max(axis=1, keepdims=True)) / temperature[:, None].astype(np.float64))
    order = np.lexsort((np.broadcast_to(np.arange(V_MAX), logits.shape), -row64), axis=1)
    by_logit = np.cumsum(np.take_along_axis(w, order, axis=1), axis=1)
    total = by_logit[:, -1:]
    top_p = uniforms_for(rng, np.take_along_axis(w, order, axis=1))
    last = np.argmax(by_logit >= top_p[:, None].astype(np.float64) * total, axis=1)[:, None]
    inside = logits >= np.take_along_axis(logits, np.take_along_axis(order, last, axis=1), axis=1)
    buffers = {
        "logits": logits, "logit_bits": logits.view(np.int32).copy(),
        "temperature": temperature,
        "top_p": top_p,
        "u": uniforms_for(rng, np.where(inside, w, 0.0)),
        "token": np.full(rows, SENTINEL, dtype=np.int32), "kept": np.full(rows, SENTINEL, dtype=np.int32),
    }
    step = LaunchStep("top_p_sample", grid=rows, block=TPB,
                      args=("logits", "logit_bits", "temperature", "top_p", "u", "token", "kept"))
    return Case(f"bench {rows} rows", buffers, (step,), "graduate-mode timing")


PUZZLE = Puzzle(
    slug="top-p-sampling",
    number=77,
    title="Top-p sampling",
    chapter=11,
    difficulty=5,
    description=DESCRIPTION,
    kernels=("top_p_sample",),
    spec=spec,
    make_cases=make_cases,
    outputs=("token", "kept"),
    constraints=(
        max_global_reads_per_thread(ITEMS, "logits"),
        max_global_reads_per_thread(ITEMS, "logit_bits"),
        shared_memory_budget(SHARED_BUDGET),
        max_global_writes_per_thread(1, "token"),
        max_global_writes_per_thread(1, "kept"),
    ),
    stars=(
        Star(2, "coalesced loads", (ideal_coalescing(),)),
    ),
    hints=(
        f"Registers: `w = cuda.local.array({ITEMS}, numba.float32)` and `key = cuda.local.array({ITEMS}, "
        "numba.int64)`; a slot past V gets w = 0 and key = -1 (below every real key). One device function "
        "`block_sum(red, x, t)` (store, barrier, tree, barrier, read `red[0]`, barrier) serves every sum; "
        "the maximum needs a `block_max` like it.",
        "`target = top_p[b] * Z`. For bit 31 down to 0: `cand = prefix | (1 << bit)`, `part` = the sum of "
        "your w[r] with `key[r] >= cand`, `if block_sum(red, part, t) >= target: prefix = cand` — every "
        "thread gets the same sum, so every thread takes the same branch.",
        "Nucleus: `key[r] >= prefix`. `kept` = a block sum of counts, `mass` = a block sum of w. Sampling: "
        "for r = 0..3, an inclusive Hillis-Steele scan of `x = w[r] if inside else 0` over the block plus "
        "`carry` (the sum of the rounds before); the thread with `carry + incl > u * mass` and "
        "`carry + incl - x <= u * mass` (and x > 0) writes `token = r * TPB + t`.",
    ),
    reading=READING,
    bench=bench,
)
