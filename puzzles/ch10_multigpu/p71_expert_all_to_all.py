"""Puzzle 71 — All-to-all for expert parallelism: tokens packed by expert, counts exchanged first, then only
the routed tokens sent to their expert's device and the results sent back."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, Devices, LaunchStep, Puzzle, Star, Sync
from puzzles.rules import ideal_coalescing, max_global_writes_per_thread, no_atomics

from .layout import at, budget
from .rules import no_peer_stores, within_link_budget

D = 16                           # features per token
TOKENS_MAX = 64                  # tokens per device: route runs one block of (D, TOKENS_MAX) threads
TPB = 128                        # threads per block of dispatch and combine
SENTINEL = -7

READING = ("*The Ultra-Scale Playbook* — Hugging Face, section \"Expert Parallelism\" (all-to-all dispatch and "
           "combine); *Switch Transformers* (2021) — Fedus, Zoph, Shazeer, section 2.2 (expert capacity)")

DESCRIPTION = f"""\
# Puzzle 71 — All-to-all: experts on different GPUs

A mixture-of-experts layer replaces the MLP by `N` experts and a router that sends each token to one of
them. With **expert parallelism** expert `e` lives on device `e`, so every device must send each of its
tokens to the device of that token's expert and get the result back: two **all-to-alls**, where every
device sends a different piece to every other. It is the collective that the switch (every device linked
to every other) is built for, and the one the other parallelisms of this chapter never need.

Device `d` has `T` tokens `x@d` (`T x {D}`) and the router's choice `expert@d` (one expert per token).
Each expert takes at most `C` tokens from each device (its **capacity**): the first `C` in token order;
the rest are **dropped** and their output is 0 (the residual connection around the layer carries them on).
Expert `e` computes `x * scale@e + shift@e`, feature by feature.

```
route     (local)  send@d[e, j] = the j-th token of d that chose e (j < C)
                   slot@d[i] = j, or -1;  counts@d[e] = how many of d's tokens e takes
exchange  (N x N)  counts_in@e[q] = counts@q[e]             the sizes first: 4 bytes a link
dispatch  (N x N)  recv@e[q, j] = expert e(send@q[e, j])    only j < counts_in@e[q]
combine   (N x N)  out@d[i] = recv@e[d, slot@d[i]]          e = expert@d[i]; 0 if dropped
```

**Example** (`N = 2`, `T = 4`, `C = 2`; each token's {D} features are equal, shown once; expert 0 doubles,
expert 1 adds 100):

```
device 0: x = 1 2 3 4      expert = 1 0 1 1  ->  send@0: e0 [2], e1 [1, 3]   (token 3 dropped)
device 1: x = 10 20 30 40  expert = 0 0 1 0  ->  send@1: e0 [10, 20], e1 [30] (token 3 dropped)
recv@0 (expert 0): from 0 [4], from 1 [20, 40]
recv@1 (expert 1): from 0 [101, 103], from 1 [130]
out@0 = 101 4 103 0                          out@1 = 20 40 130 0
```

The link from device 0 to device 1 carries 4 bytes of counts, the 2 tokens device 1's expert takes from
device 0 (128 bytes) and the 2 results device 1 gets back from expert 0 (128 bytes). Sending the whole
capacity (`C` slots, padding included) would be simpler and is what a fixed-size all-to-all does — but the
padding crosses the link too.

**What's new:** all-to-all with sizes only known at run time — exchange the counts first, then move
exactly the routed tokens, both ways.

**Launch:** round 1: on every device `d`, `route(expert, x, send, counts, slot)` on one block of
`({D}, {TOKENS_MAX})` threads (thread `(c, i)`: feature `c` of token `i`). Round 2: on every device `e`, for every
`q = 0 .. N-1`, `exchange(counts_in, counts_src, src, me)` with `counts_src = counts@q`, `src = q`, `me = e`
(one block of 32 threads). Round 3: likewise `dispatch(recv, counts_in, send_src, scale, shift, src, me)`
with `send_src = send@q`, on `ceil(C {D} / {TPB})` blocks of {TPB} (thread `t` = slot `t // {D}`, feature `t % {D}`).
Round 4: on every device `d`, for every `q`, `combine(out, expert, slot, result_src, src, me)` with
`result_src = recv@q`, `me = d`, on `ceil(T {D} / {TPB})` blocks of {TPB} (token `t // {D}`, feature `t % {D}`).
All devices synchronise between rounds. `T <= {TOKENS_MAX}`. ★★: only counts and routed tokens cross the
links. ★★★: coalesced.

**Read more:** {READING}
"""


def kept_slots(expert: np.ndarray, ranks: int, capacity: int) -> np.ndarray:
    """Each token's slot at its expert (its rank among the device's tokens with that expert), -1 if dropped."""
    seen = np.zeros(ranks, np.int64)
    slots = np.empty(expert.size, np.int64)
    for i, e in enumerate(expert):
        slots[i] = seen[e] if seen[e] < capacity else -1
        seen[e] += 1
    return slots


def spec(**buffers) -> dict[str, np.ndarray]:
    ranks = sum(1 for k in buffers if k.startswith("x@"))
    capacity = buffers[at("send", 0)].shape[1]
    out = {}
    for d in range(ranks):
        x, expert = buffers[at("x", d)].astype(np.float64), buffers[at("expert", d)]
        slots = kept_slots(expert, ranks, capacity)
        scale = np.stack([buffers[at("scale", e)] for e in expert]).astype(np.float64)
        shift = np.stack([buffers[at("shift", e)] for e in expert]).astype(np.float64)
        y = x * scale + shift
        y[slots < 0] = 0.0
        out[at("out", d)] = y.astype(np.float32)
    return out


def link_budget(experts: list[np.ndarray], ranks: int, capacity: int) -> dict[str, int]:
    """Link a -> b: the count (4 bytes), b's expert's tokens from a, and b's tokens' results from a's expert."""
    kept = np.zeros((ranks, ranks), np.int64)            # kept[d, e]: tokens of device d that expert e takes
    for d, expert in enumerate(experts):
        slots = kept_slots(expert, ranks, capacity)
        for e in range(ranks):
            kept[d, e] = np.count_nonzero((expert == e) & (slots >= 0))
    row = D * 4
    return budget((a, b, 4 + kept[a, b] * row + kept[b, a] * row)
                  for a in range(ranks) for b in range(ranks) if a != b)


def _case(name: str, xs: list[np.ndarray], experts: list[np.ndarray], scales: np.ndarray, shifts: np.ndarray,
          capacity: int, note: str) -> Case:
    ranks, tokens = len(xs), xs[0].shape[0]
    assert tokens <= TOKENS_MAX and all(e.max() < ranks for e in experts)
    buffers: dict = {}
    for d in range(ranks):
        buffers[at("x", d)] = xs[d].astype(np.float32)
        buffers[at("expert", d)] = experts[d].astype(np.int32)
        buffers[at("slot", d)] = np.full(tokens, SENTINEL, np.int32)
        buffers[at("send", d)] = np.full((ranks, capacity, D), np.nan, np.float32)
        buffers[at("counts", d)] = np.full(ranks, SENTINEL, np.int32)
        buffers[at("counts_in", d)] = np.full(ranks, SENTINEL, np.int32)
        buffers[at("recv", d)] = np.full((ranks, capacity, D), np.nan, np.float32)
        buffers[at("scale", d)] = scales[d].astype(np.float32)
        buffers[at("shift", d)] = shifts[d].astype(np.float32)
        buffers[at("out", d)] = np.full((tokens, D), np.nan, np.float32)
    steps: list = [LaunchStep("route", 1, (D, TOKENS_MAX),
                              (at("expert", d), at("x", d), at("send", d), at("counts", d), at("slot", d)), device=d)
                   for d in range(ranks)]
    steps.append(Sync())
    for e in range(ranks):
        steps += [LaunchStep("exchange", 1, 32, (at("counts_in", e), at("counts", q), q, e), device=e)
                  for q in range(ranks)]
    steps.append(Sync())
    for e in range(ranks):
        steps += [LaunchStep("dispatch", -(-capacity * D // TPB), TPB,
                             (at("recv", e), at("counts_in", e), at("send", q), at("scale", e), at("shift", e), q, e),
                             device=e) for q in range(ranks)]
    steps.append(Sync())
    for d in range(ranks):
        steps += [LaunchStep("combine", -(-tokens * D // TPB), TPB,
                             (at("out", d), at("expert", d), at("slot", d), at("recv", q), q, d), device=d)
                  for q in range(ranks)]
    return Case(name, buffers, tuple(steps), note,
                devices=Devices(ranks, "switch", link_budget(experts, ranks, capacity)))


def _worked() -> Case:
    xs = [np.repeat(np.array([[1.0], [2.0], [3.0], [4.0]]), D, axis=1),
          np.repeat(np.array([[10.0], [20.0], [30.0], [40.0]]), D, axis=1)]
    experts = [np.array([1, 0, 1, 1]), np.array([0, 0, 1, 0])]
    scales = np.array([np.full(D, 2.0), np.full(D, 1.0)])
    shifts = np.array([np.zeros(D), np.full(D, 100.0)])
    return _case("worked example N=2 T=4 C=2", xs, experts, scales, shifts, 2,
                 "the example of the description: one token dropped on each device")


def _random(name: str, rng: np.random.Generator, ranks: int, tokens: int, capacity: int, note: str,
            skew: bool = False) -> Case:
    xs = [rng.normal(0, 1, (tokens, D)) for _ in range(ranks)]
    weights = np.linspace(3, 1, ranks) ** 3 if skew else np.ones(ranks)     # skewed: expert 0 is popular
    experts = [rng.choice(ranks, tokens, p=weights / weights.sum()) for _ in range(ranks)]
    return _case(name, xs, experts, rng.uniform(0.5, 2.0, (ranks, D)), rng.normal(0, 1, (ranks, D)), capacity,
                 note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(71) if rng is None else rng
    tokens = int(rng.integers(40, TOKENS_MAX + 1))
    return (
        _worked(),
        _random(f"4 devices T={tokens} C={tokens // 2}", rng, 4, tokens, tokens // 2, "capacity twice the "
                "average load: most tokens kept, a few drops where the router is unlucky"),
        _random("4 devices T=64 C=8 skewed", rng, 4, 64, 8, "a popular expert 0: it drops many tokens, the "
                "others get fewer than their capacity", skew=True),
        _random("8 devices T=24 C=6", rng, 8, 24, 6, "the most devices: 64 device pairs, some with no tokens"),
        _random("2 devices T=1 C=1", rng, 2, 1, 1, "one token per device"),
    )


def bench_max(ranks: int = 8) -> Case:
    """The most tokens route's one block allows, on ``ranks`` devices (how many GPUs a graduate run has)."""
    return _random(f"bench {ranks} devices T={TOKENS_MAX}", np.random.default_rng(71), ranks, TOKENS_MAX,
                   TOKENS_MAX // 4, "graduate-mode timing: the largest case the route kernel's one block allows")


PUZZLE = Puzzle(
    slug="expert-all-to-all",
    number=71,
    title="All-to-all for experts",
    chapter=10,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("route", "exchange", "dispatch", "combine"),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    scratch=("slot", "send", "counts", "counts_in", "recv"),   # written by the kernels, not judged
    constraints=(
        max_global_writes_per_thread(1, "out"),
        max_global_writes_per_thread(1, "send"),
        max_global_writes_per_thread(1, "recv"),
        no_atomics(),
        no_peer_stores(),
    ),
    stars=(
        Star(2, "only the counts and the routed tokens cross the links, not the padding",
             (within_link_budget("the routed tokens"),)),
        Star(3, "coalesced loads and stores", (ideal_coalescing(),)),
    ),
    hints=(
        "`route`: token `i = threadIdx.y` (if `i < expert.size`) has expert `e = expert[i]`; its slot `j` is "
        "the number of tokens `k < i` with `expert[k] == e`. Keep it if `j < C` (`C = send.shape[1]`): "
        "`send[e, j, c] = x[i, c]`. Thread `(0, i)` writes `slot[i]`; threads `(0, e)` for `e < N` count "
        "their expert's tokens and write `counts[e] = min(count, C)`.",
        "`exchange`: one thread does `counts_in[src] = counts_src[me]`. `dispatch`: thread `t` is slot "
        "`j = t // D`, feature `c = t % D`; copy only if `j < counts_in[src]`, applying `scale`, `shift`. "
        "`combine`: token `i = t // D` with `expert[i] == src` takes `result_src[me, slot[i], c]`, or 0.",
        "```python\n# route, thread (c, i):\nj = 0\nfor k in range(i):\n    if expert[k] == e:\n        j += 1\n"
        "if j < cap:\n    send[e, j, c] = x[i, c]\n# combine:\nif i < out.shape[0] and expert[i] == src:\n"
        "    s = slot[i]\n    out[i, c] = result_src[me, s, c] if s >= 0 else 0.0\n```",
    ),
    reading=READING,
    rtol=1e-6,
    atol=1e-6,
    bench_max=bench_max,
    bench_note=f"route is one block of ({D}, {TOKENS_MAX}) threads, so a device routes at most {TOKENS_MAX} tokens: "
               "the case cannot grow past 8 devices of 64 tokens",
)
