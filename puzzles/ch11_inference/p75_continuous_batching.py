"""Puzzle 75 — Continuous batching: causal attention over ragged sequences packed back to back, found
through offsets arrays (prefill, chunked prefill and decode tokens in one launch)."""

from __future__ import annotations

import math

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import max_global_reads_per_thread, max_global_writes_per_thread, no_atomics

D = 16                   # head dimension
TPB = 64                 # packed query tokens per block: one per thread
B_MAX = 40               # the most sequences in a case
SEARCH_READS = math.ceil(math.log2(B_MAX)) + 2   # 8: a binary search over cu_q, plus its two ends

READING = ("*Efficient Memory Management for Large Language Model Serving with PagedAttention* (2023) — "
           "Kwon et al. (vLLM): batching requests of different lengths at every step")

DESCRIPTION = f"""\
# Puzzle 75 — Continuous batching

A serving engine does not wait for a batch of equal-length prompts. At every step it runs whatever is
ready: the next token of each sequence that is generating (**decode**: 1 new token), the whole prompt of a
newcomer (**prefill**), or the next piece of a long prompt (**chunked prefill**). Padding them all to the
longest would waste most of the launch, so the tokens are **packed** back to back and two *offsets* arrays
say where each sequence starts (FlashAttention calls them `cu_seqlens`):

    sequence b:  new tokens  q[cu_q[b] .. cu_q[b+1]-1]     (nq of them)
                 all keys    k[cu_k[b] .. cu_k[b+1]-1]     (nk >= nq: the cache, then the new tokens)

The new tokens are the *last* nq of the sequence, so its token `j` (0-based among the new ones) is at
position `pos = nk - nq + j` and attends, causally, to keys `0 .. pos` of its own sequence:

    out[i] = softmax_t( scale * q[i] . k[cu_k[b] + t] ) . v[cu_k[b] + t]      for t = 0 .. pos

**Example:** `cu_q = [0, 3, 4, 6]`, `cu_k = [0, 3, 8, 12]`: sequence 0 is a prefill (3 new tokens, 3
keys), sequence 1 a decode (1 new token, 5 keys), sequence 2 a chunked prefill (2 new tokens, 4 keys).

```
packed q:  | q0 q1 q2 | q3 | q4 q5 |          packed k: | k0 k1 k2 | k3 .. k7 | k8 .. k11 |
             seq 0      s1   seq 2                        seq 0      seq 1      seq 2
q1: seq 0, j = 1, pos = 3 - 3 + 1 = 1   -> keys k0, k1
q3: seq 1, j = 0, pos = 5 - 1 + 0 = 4   -> keys k3 .. k7      (a decode token sees the whole cache)
q4: seq 2, j = 0, pos = 4 - 2 + 0 = 2   -> keys k8, k9, k10   (k11 is q5's own key: not yet)
```

**What's new:** raggedness without padding. A thread knows only its packed index `i`; it must find its
sequence — the `b` with `cu_q[b] <= i < cu_q[b+1]` — by a **binary search** over the offsets (they are
sorted), then apply the causal limit of *its* sequence. A block of {TPB} tokens usually holds pieces of
several sequences.

**Launch:** `ceil(total_q/{TPB})` blocks of {TPB} threads, thread `i = cuda.grid(1)` owns packed token `i`.
`cu_q` and `cu_k` are int32 of length `B + 1` (`cu_q[0] = cu_k[0] = 0`, `cu_q[B] = total_q`); a case has
up to {B_MAX} sequences of up to 64 keys. Keep the online softmax in registers (puzzle 44's `m`, `l`,
`acc`; no shared memory is needed). Rules: read `q[i]` once, `cu_k` at most twice, each key and value of
the sequence at most once; write `out[i]` once. ★★: a binary search — at most {SEARCH_READS} reads of `cu_q`
per thread (walking the offsets from the start reads up to {B_MAX + 1}).

**Read more:** {READING}
"""


def spec(q: np.ndarray, k: np.ndarray, v: np.ndarray, cu_q: np.ndarray, cu_k: np.ndarray, scale: float,
         out: np.ndarray) -> dict[str, np.ndarray]:
    result = np.empty(out.shape, dtype=np.float64)
    for b in range(cu_q.size - 1):
        nq, nk = cu_q[b + 1] - cu_q[b], cu_k[b + 1] - cu_k[b]
        keys = k[cu_k[b]:cu_k[b + 1]].astype(np.float64)
        values = v[cu_k[b]:cu_k[b + 1]].astype(np.float64)
        for j in range(nq):
            pos = nk - nq + j
            s = keys[:pos + 1] @ q[cu_q[b] + j].astype(np.float64) * scale
            e = np.exp(s - s.max())
            result[cu_q[b] + j] = (e / e.sum()) @ values[:pos + 1]
    return {"out": result.astype(np.float32)}


def _case(name: str, rng: np.random.Generator, seqs: list[tuple[int, int]], note: str,
          q_scale: float = 1.0, max_seqs: int | None = B_MAX) -> Case:
    """``seqs``: (new tokens, keys) per sequence, packed in that order."""
    nq = np.array([a for a, _ in seqs])
    nk = np.array([b for _, b in seqs])
    assert (nq >= 1).all() and (nk >= nq).all() and nk.max() <= 64
    assert max_seqs is None or len(seqs) <= max_seqs
    cu_q = np.concatenate([[0], np.cumsum(nq)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(nk)]).astype(np.int32)
    total_q, total_k = int(cu_q[-1]), int(cu_k[-1])
    buffers = {
        "q": (rng.normal(0, 1, (total_q, D)) * q_scale).astype(np.float32),
        "k": rng.normal(0, 1, (total_k, D)).astype(np.float32),
        "v": rng.normal(0, 1, (total_k, D)).astype(np.float32),
        "cu_q": cu_q,
        "cu_k": cu_k,
        "scale": np.float32(1.0 / np.sqrt(D)),
        "out": np.full((total_q, D), np.nan, dtype=np.float32),
    }
    step = LaunchStep("varlen_attention", grid=(total_q + TPB - 1) // TPB, block=TPB,
                      args=("q", "k", "v", "cu_q", "cu_k", "scale", "out"))
    return Case(name, buffers, (step,), note)


def _mix(rng: np.random.Generator, count: int) -> list[tuple[int, int]]:
    """Decodes, prefills and chunked prefills in random order."""
    seqs = []
    for kind in rng.integers(0, 3, count):
        if kind == 0:                                   # decode
            seqs.append((1, int(rng.integers(1, 65))))
        elif kind == 1:                                 # prefill
            n = int(rng.integers(1, 13))
            seqs.append((n, n))
        else:                                           # chunked prefill
            nq = int(rng.integers(2, 9))
            seqs.append((nq, int(rng.integers(nq + 1, 65))))
    return seqs


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(75) if rng is None else rng
    return (
        _case("worked example", np.random.default_rng(75), [(3, 3), (1, 5), (2, 4)],
              "the three sequences of the description"),
        _case(f"{B_MAX} sequences, mixed", rng, _mix(rng, B_MAX), f"{B_MAX} sequences of all three kinds: "
              "blocks hold pieces of many sequences, and a walk over the offsets reads many of them"),
        _case("decode only", rng, [(1, int(n)) for n in rng.integers(1, 65, 23)],
              "23 sequences, one new token each: every token sees its whole cache"),
        _case("one long prefill across blocks", rng, [(2, 2), (63, 63), (5, 9)],
              "the second sequence (packed tokens 2..64) straddles the boundary between blocks 0 and 1"),
        _case("large scores", rng, [(4, 40), (1, 64), (9, 9)], "queries scaled so the scores reach the "
              "hundreds: the running maximum is needed", q_scale=30.0),
        _case("one token", rng, [(1, 1)], "one sequence, one key: the output is that key's value"),
    )


def bench(n: int) -> Case:
    """About n multiply-adds of q.k: decode tokens with 64-key caches, n / (64 * D) of them."""
    count = max(1, n // (64 * D))
    return _case(f"bench {count} decode tokens", np.random.default_rng(75), [(1, 64)] * count,
                 "graduate-mode timing", max_seqs=None)


PUZZLE = Puzzle(
    slug="continuous-batching",
    number=75,
    title="Continuous batching",
    chapter=11,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("varlen_attention",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(D, "q"),
        max_global_reads_per_thread(2, "cu_k"),
        max_global_reads_per_thread(64 * D, "k"),
        max_global_reads_per_thread(64 * D, "v"),
        max_global_writes_per_thread(D, "out"),
        no_atomics(),
    ),
    stars=(
        Star(2, f"a binary search over the offsets: at most {SEARCH_READS} reads of cu_q per thread",
             (max_global_reads_per_thread(SEARCH_READS, "cu_q"),)),
    ),
    hints=(
        "`B = cu_q.shape[0] - 1`. Keep `lo = 0, hi = B` with `cu_q[lo] <= i < cu_q[hi]` true; while "
        "`hi - lo > 1`, look at `mid = (lo + hi) // 2` and move one end. Then `b = lo`.",
        "Remember the values you read: `start = 0` (that is `cu_q[0]`) and `end = q.shape[0]` (that is "
        "`cu_q[B]`) change whenever `lo` or `hi` moves, so after the search you know `cu_q[b]` and "
        "`cu_q[b+1]` without reading them again.",
        "`nq = end - start`, `k0 = cu_k[b]`, `nk = cu_k[b + 1] - k0`, `pos = nk - nq + (i - start)`. Then "
        "puzzle 44's online softmax over keys `k0 .. k0 + pos`, with `q[i]` in a local array: "
        "`m_new = max(m, s)`, `corr = exp(m - m_new)`, `p = exp(s - m_new)`, `l = l * corr + p`, "
        "`acc[c] = acc[c] * corr + p * v[key, c]`.",
    ),
    reading=READING,
    rtol=1e-4,
    atol=1e-5,
    bench=bench,
)
