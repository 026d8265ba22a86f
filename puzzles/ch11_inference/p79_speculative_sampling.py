"""Puzzle 79 — Speculative sampling: accept each draft token with probability min(1, p/q), and at the
first rejection resample from the normalised residual max(0, p - q), with the uniforms given."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import max_global_reads_per_thread, max_global_writes_per_thread, no_atomics

from .sampling import MARGIN, draw, uniform_for, uniforms_for

TPB = 512                # threads per block = the largest vocabulary: thread t owns token t
G_MAX = 8                # the longest draft
SENTINEL = -7

READING = ("*Fast Inference from Transformers via Speculative Decoding* (2022) — Leviathan, Kalman, Matias, "
           "section 2.3 (speculative sampling) and Appendix A.1 (why the output has the target's distribution)")

DESCRIPTION = f"""\
# Puzzle 79 — Speculative sampling

Puzzle 46 verified drafts greedily: a draft token survives if it *is* the target's argmax. With sampling,
the draft model proposes token `x` from its distribution `q`, and the target model, which would have sampled
from `p`, accepts it **with probability min(1, p(x) / q(x))**. Where the draft over-proposes a token
(`q > p`) it is sometimes refused; after a refusal the token is drawn again from what the draft
under-proposes, the **residual** `max(0, p - q)`, normalised. Leviathan et al. prove that the tokens that come
out have exactly the target's distribution — speculation changes the speed, never the text's statistics.

For sequence `b` with draft `x_0 .. x_(G-1)`, the draft's distributions `q[b, i, :]` and the target's
`p[b, i, :]` (one more, `p[b, G, :]`, for the token after the whole draft):

1. position `i` is accepted when `u_accept[b, i] < p[b, i, x_i] / q[b, i, x_i]`;
   `accepted[b]` = the first position that is not, or `G` if all are (later positions do not count);
2. if `a = accepted[b] < G`: `next_token[b]` is drawn from `r = max(0, p[b, a, :] - q[b, a, :])`;
   otherwise from `r = p[b, G, :]` (the bonus token);
3. the draw with `u = u_sample[b]`: the first token id whose running sum of `r` exceeds `u * sum(r)`.

The cases keep every `u_accept` at least 0.1% away from its ratio (so `u * q < p` gives the same answer
as the division) and `u_sample` at least 0.1% of the total inside one token's interval.

**Example** (V = 4, G = 3), one sequence, draft `[2, 0, 1]`:

```
i = 0: q = [.1 .2 .6 .1], p = [.1 .1 .5 .3], x = 2: p/q = .833, u = .40  -> accept
i = 1: q = [.7 .1 .1 .1], p = [.2 .3 .3 .2], x = 0: p/q = .286, u = .90  -> reject: accepted = 1
residual max(0, p - q) = [0 .2 .2 .1], sum .5; u_sample = .5: u * .5 = .25
running sums [0 .2 .4 .5]: the first above .25 is token 2          -> next_token = 2
```

**What's new:** sampling *with a correction* — a rejection test per position (a warp vote finds the first
failure, as in puzzle 46), then a block-wide scan over the vocabulary to sample from a distribution built
on the fly.

**Launch:** one block of {TPB} threads per sequence; thread `t` owns token `t` (`V <= {TPB}`); lanes `i < G` of
warp 0 test the draft positions (`G <= {G_MAX}`). `accepted` and `next_token` are int32, written once each.
Rules: at most 4 reads of `p_probs` and of `q_probs` per thread (read only the rows you need). ★★: one
pass over the chosen row — at most 2 reads of each per thread (a thread keeps its residual in a register
for both the sum and the scan).

**Read more:** {READING}
"""


def spec(draft: np.ndarray, q_probs: np.ndarray, p_probs: np.ndarray, u_accept: np.ndarray,
         u_sample: np.ndarray, accepted: np.ndarray, next_token: np.ndarray) -> dict[str, np.ndarray]:
    acc = np.empty(accepted.shape, dtype=np.int32)
    nxt = np.empty(next_token.shape, dtype=np.int32)
    g = draft.shape[1]
    for b in range(draft.shape[0]):
        a = g
        for i in range(g):
            x = draft[b, i]
            if not u_accept[b, i] < float(p_probs[b, i, x]) / float(q_probs[b, i, x]):
                a = i
                break
        acc[b] = a
        p = p_probs[b, a].astype(np.float64)
        r = np.maximum(0.0, p - q_probs[b, a].astype(np.float64)) if a < g else p
        nxt[b] = draw(r, float(u_sample[b]))
    return {"accepted": acc, "next_token": nxt}


def residual(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return np.maximum(0.0, p.astype(np.float64) - q.astype(np.float64))


def _case(name: str, draft, q_probs, p_probs, u_accept, u_sample, note: str) -> Case:
    draft = np.asarray(draft, dtype=np.int32)
    b, g = draft.shape
    q_probs = np.asarray(q_probs, dtype=np.float32)
    p_probs = np.asarray(p_probs, dtype=np.float32)
    assert q_probs.shape[:2] == (b, g) and p_probs.shape[:2] == (b, g + 1) and q_probs.shape[2] <= TPB
    assert g <= G_MAX and (np.take_along_axis(q_probs, draft[:, :, None], 2) > 0).all()
    buffers = {
        "draft": draft, "q_probs": q_probs, "p_probs": p_probs,
        "u_accept": np.asarray(u_accept, dtype=np.float32), "u_sample": np.asarray(u_sample, dtype=np.float32),
        "accepted": np.full(b, SENTINEL, dtype=np.int32), "next_token": np.full(b, SENTINEL, dtype=np.int32),
    }
    step = LaunchStep("speculative_sample", grid=b, block=TPB,
                      args=("draft", "q_probs", "p_probs", "u_accept", "u_sample", "accepted", "next_token"))
    return Case(name, buffers, (step,), note)


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def _batch(rng: np.random.Generator, name: str, batch: int, g: int, vocab: int, note: str,
           accept_lengths: list[int] | None = None, same: bool = False, boost_last: float = 0.0) -> Case:
    """Target and draft distributions that roughly agree; drafts, and uniforms that give each sequence a
    chosen number of accepted tokens with every test at least MARGIN from its ratio. ``boost_last`` raises
    the target's logit of the last token (not the draft's), so it holds most of the residual mass."""
    z = rng.normal(0, 2, (batch, g + 1, vocab))
    p = _softmax(z + np.where(np.arange(vocab) == vocab - 1, boost_last, 0.0))
    q = p[:, :g].copy() if same else _softmax(z[:, :g] + rng.normal(0, 1, (batch, g, vocab)))
    lengths = rng.integers(0, g + 1, batch) if accept_lengths is None else np.asarray(accept_lengths)
    draft = np.empty((batch, g), dtype=np.int32)
    u_acc = np.empty((batch, g), dtype=np.float32)
    u_smp = np.empty(batch, dtype=np.float32)
    for b in range(batch):
        a = int(lengths[b])
        for i in range(g):
            ratio = p[b, i].astype(np.float64) / q[b, i]
            if i == a:                                    # a token the target may refuse
                ok = np.flatnonzero((ratio < 1 - 3 * MARGIN) & (q[b, i] > 1e-4))
            else:                                         # a token the target accepts with some margin
                ok = np.flatnonzero((ratio > 3 * MARGIN) & (q[b, i] > 1e-4))
            x = int(rng.choice(ok, p=q[b, i, ok] / q[b, i, ok].sum()))     # proposed as the draft would
            draft[b, i] = x
            lim = min(1.0, ratio[x])
            if i < a:
                u_acc[b, i] = rng.uniform(0, lim - 2 * MARGIN * max(lim, 1e-3))
            elif i == a:
                u_acc[b, i] = rng.uniform(lim + 2 * MARGIN, 1)
            else:
                u_acc[b, i] = rng.random()               # after a rejection: must not matter
        r = residual(p[b, a], q[b, a]) if a < g else p[b, g]
        u_smp[b] = uniform_for(rng, r)
    return _case(name, draft, q, p, u_acc, u_smp, note)


def _worked_example() -> Case:
    q = [[[.1, .2, .6, .1], [.7, .1, .1, .1], [.25, .25, .25, .25]],      # the description's sequence
         [[.4, .3, .2, .1], [.1, .1, .1, .7], [.5, .2, .2, .1]],          # everything accepted: bonus
         [[.1, .8, .05, .05], [.25, .25, .25, .25], [.25, .25, .25, .25]]]  # refused at once
    p = [[[.1, .1, .5, .3], [.2, .3, .3, .2], [.25, .25, .25, .25], [.4, .3, .2, .1]],
         [[.4, .3, .2, .1], [.1, .1, .1, .7], [.5, .3, .1, .1], [.1, .2, .3, .4]],
         [[.3, .4, .2, .1], [.25, .25, .25, .25], [.25, .25, .25, .25], [.25, .25, .25, .25]]]
    return _case("worked example", [[2, 0, 1], [0, 3, 1], [1, 2, 3]], q, p,
                 [[.4, .9, .5], [.99, .3, .6], [.6, .1, .1]], [.5, .7, .3],
                 "the description's sequence (accepted 1, token 2); one whose p >= q at every drafted token "
                 "(all accepted: the bonus token from p[G], token 3); one refused at position 0 (token 0)")


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(79) if rng is None else rng
    return (
        _worked_example(),
        _batch(rng, "random batch of 6, V=512, G=8", 6, G_MAX, TPB, "every number of accepted tokens, 0 to 8",
               accept_lengths=[0, 3, 8, 5, 6, 7]),
        _batch(rng, "after a rejection, V=300", 5, 6, 300, "the uniforms after the first rejection would "
               "accept: only the leading run counts; 212 threads own no token", accept_lengths=[2, 0, 4, 1, 5]),
        _batch(rng, "draft equals target, G=4", 3, 4, 128, "q = p: every ratio is 1 and every draft is "
               "accepted, whatever u is (min(1, p/q))", accept_lengths=[4, 4, 4], same=True),
        _batch(rng, "G=1", 4, 1, 64, "one draft token per sequence", accept_lengths=[0, 1, 0, 1]),
        _batch(rng, "last token likely, V=512", 3, 1, TPB, "the target puts most of its mass on token 511 "
               "and the draft does not; every draft is rejected, so the residual's total (which must include "
               "the block's last thread) decides the token", accept_lengths=[0, 0, 0], boost_last=8.0),
    )


def bench(n: int) -> Case:
    """About n vocabulary entries scanned: n / 512 sequences with drafts of 2 tokens, the distributions and
    uniforms drawn for every sequence at once, with the margins of the cases (``accept_uniforms``)."""
    batch, g = max(1, n // TPB), 2
    rng = np.random.default_rng(79)
    z = rng.normal(0, 2, (batch, g + 1, TPB)).astype(np.float32)
    p = _softmax(z)
    q = _softmax(z[:, :g] + rng.normal(0, 1, (batch, g, TPB)).astype(np.float32))
    draft = rng.integers(0, TPB, (batch, g)).astype(np.int32)
    rows = np.arange(batch)[:, None]
    pos = np.arange(g)[None, :]
    ratio = p[rows, pos, draft].astype(np.float64) / q[rows, pos, draft]
    u_acc = accept_uniforms(rng, np.minimum(1.0, ratio))
    refused = u_acc >= np.minimum(1.0, ratio)
    a = np.where(refused.any(axis=1), refused.argmax(axis=1), g)
    chosen = p[np.arange(batch), a].astype(np.float64)
    r = np.where((a < g)[:, None], np.maximum(0.0, chosen - q[np.arange(batch), np.minimum(a, g - 1)]), chosen)
    return _case(f"bench {batch} sequences", draft, q, p, u_acc, uniforms_for(rng, r), "graduate-mode timing")


def accept_uniforms(rng: np.random.Generator, limit: np.ndarray, tries: int = 60) -> np.ndarray:
    """Uniforms for acceptance tests against ``limit`` = min(1, p/q): each redrawn until it is below
    ``limit`` by 2 MARGIN of it (or of 1e-3, for tiny limits) or above it by 2 MARGIN, as in ``_batch``:
    ``u * q < p`` in float32 then gives the answer of the exact division."""
    u = rng.random(limit.shape)
    for _ in range(tries):
        close = (u >= limit - 2 * MARGIN * np.maximum(limit, 1e-3)) & (u <= limit + 2 * MARGIN)
        if not close.any():
            return u.astype(np.float32)
        u[close] = rng.random(int(close.sum()))
    raise AssertionError("could not draw acceptance uniforms clear of their limits")


PUZZLE = Puzzle(
    slug="speculative-sampling",
    number=79,
    title="Speculative sampling",
    chapter=11,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("speculative_sample",),
    spec=spec,
    make_cases=make_cases,
    outputs=("accepted", "next_token"),
    constraints=(
        max_global_reads_per_thread(4, "p_probs"),
        max_global_reads_per_thread(4, "q_probs"),
        max_global_writes_per_thread(1, "accepted"),
        max_global_writes_per_thread(1, "next_token"),
        no_atomics(),
    ),
    stars=(
        Star(2, "one pass over the chosen row: at most 2 reads of p_probs and of q_probs per thread",
             (max_global_reads_per_thread(2, "p_probs"), max_global_reads_per_thread(2, "q_probs"))),
    ),
    hints=(
        "Warp 0 (t < 32): `reject = t < G and u_accept[b, t] * q_probs[b, t, x] >= p_probs[b, t, x]` with "
        "`x = draft[b, t]`; `mask = cuda.ballot_sync(0xFFFFFFFF, reject)`; `a = cuda.ffs(mask) - 1` if the "
        "mask is not 0, else G. Put `a` in shared memory and sync: every thread needs it.",
        "Thread t < V: `r = max(0, p[b, a, t] - q[b, a, t])` if `a < G`, else `p[b, G, t]`; 0 for t >= V. "
        "Block sum of r, then an inclusive scan (puzzle 28's Hillis-Steele, barriers between the reads "
        "and the writes of each step).",
        "The thread with `r > 0` and `incl > goal >= incl - r`, where `goal = u_sample[b] * total`, writes "
        "`next_token[b] = t`; thread 0 writes `accepted[b] = a`.",
    ),
    reading=READING,
    bench=bench,
)
