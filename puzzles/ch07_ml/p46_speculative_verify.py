"""Puzzle 46 — Speculative decoding: verify a batch of drafts (greedy acceptance), one warp per sequence."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import max_global_reads_per_thread, max_global_writes_per_thread, no_atomics

WARP = 32                # one warp per sequence: lane i checks draft position i
SEQS = 4                 # sequences per block: the block is (WARP, SEQS)
SENTINEL = -7
PAD_TOKEN = 0            # the target is padded with this token past position draft_len

READING = ("*Fast Inference from Transformers via Speculative Decoding* (2022) — Leviathan, Kalman, Matias, "
           "section 2; and *Assisted Generation* — Hugging Face (the greedy case)")

DESCRIPTION = f"""\
# Puzzle 46 — Speculative decoding: verify the drafts

In speculative decoding a small *draft* model guesses the next few tokens of each sequence, and the big
*target* model checks all of them in **one** forward pass. With greedy decoding, the target's choice at
draft position `i` is `target[b, i]` (its argmax given the prompt and the first `i` draft tokens), and
`target[b, n]` is its choice after all `n` draft tokens. For each sequence `b` with `n = draft_len[b]`:

* `accepted[b]` = the length of the longest prefix where the draft agrees with the target: the first
  position `i < n` with `draft[b, i] != target[b, i]`, or `n` if there is none;
* `next_token[b]` = `target[b, accepted[b]]`: the target's correction at the first disagreement, or its
  bonus token when the whole draft was accepted.

So every verification step emits `accepted + 1` tokens — at least one, as plain decoding would.

**Example.**

```
draft  = [11, 42,  7,  7]        n = 4
target = [11, 42,  9,  7,  3]
match:    ok  ok   X  (ok)       first mismatch at 2 -> accepted = 2, next_token = target[2] = 9
                                 (position 3 matches again, but after a rejection nothing counts)
draft  = [5, 6 | 8, 1]            n = 2 (8 and 1 are stale, left over from an earlier step)
target = [5, 6,  8, 0, 0]         all accepted -> accepted = 2, next_token = 8 (the bonus token)
draft  = [ | 0, 0, 0, 0]          n = 0 (all four stale)
target = [4, 0, 0, 0, 0]          nothing to check -> accepted = 0, next_token = target[0] = 4
```

The buffers are wider than most drafts. Past `draft_len` the draft buffer holds **stale tokens** from an
earlier step — sometimes equal to the target's token at that position, as the 8 above — and the target
is padded with {PAD_TOKEN}: compare only positions `i < n`.

**What's new:** a warp vote. Each lane checks one position; `cuda.ballot_sync(0xFFFFFFFF, rejected)`
gives every lane a 32-bit mask with bit `i` set where lane `i` found a mismatch. The first mismatch is the
lowest set bit: `cuda.ffs(mask)` returns its position counting from 1 (and 0 for an empty mask). No shared
memory, no barrier, no loop.

```
lane:      0  1  2  3  4 ... 31
rejected:  0  0  1  0  0 ...  0      mask = 0b0100 = 4,  ffs(4) = 3  ->  accepted = 3 - 1 = 2
```

**Launch:** `ceil(batch/{SEQS})` blocks of `({WARP}, {SEQS})` threads: `threadIdx.y` picks the sequence
`blockIdx.x * {SEQS} + threadIdx.y` (one warp each), `threadIdx.x` is the lane = draft position. Drafts hold
at most {WARP} tokens; the batch is not a multiple of {SEQS}, and the whole warp of a missing sequence
must skip it. One lane writes each output. ★★: lanes share the work — at most 4 global reads per thread
(a loop over the draft in one thread reads up to 2n + 2).

**Read more:** {READING}
"""


def spec(draft: np.ndarray, draft_len: np.ndarray, target: np.ndarray, accepted: np.ndarray,
         next_token: np.ndarray) -> dict[str, np.ndarray]:
    acc = np.empty(draft.shape[0], dtype=np.int32)
    nxt = np.empty(draft.shape[0], dtype=np.int32)
    for b in range(draft.shape[0]):
        n = int(draft_len[b])
        mismatch = np.flatnonzero(draft[b, :n] != target[b, :n])
        acc[b] = mismatch[0] if mismatch.size else n
        nxt[b] = target[b, acc[b]]
    return {"accepted": acc, "next_token": nxt}


def _case(name: str, draft: np.ndarray, draft_len: np.ndarray, target: np.ndarray, note: str) -> Case:
    batch, g = draft.shape
    assert target.shape == (batch, g + 1) and g <= WARP
    buffers = {
        "draft": np.asarray(draft, dtype=np.int32),
        "draft_len": np.asarray(draft_len, dtype=np.int32),
        "target": np.asarray(target, dtype=np.int32),
        "accepted": np.full(batch, SENTINEL, dtype=np.int32),
        "next_token": np.full(batch, SENTINEL, dtype=np.int32),
    }
    step = LaunchStep("speculative_verify", grid=(batch + SEQS - 1) // SEQS, block=(WARP, SEQS),
                      args=("draft", "draft_len", "target", "accepted", "next_token"))
    return Case(name, buffers, (step,), note)


def _batch(rng: np.random.Generator, name: str, batch: int, g: int, note: str,
           lengths: list[int] | None = None, accepts: list[int | None] | None = None) -> Case:
    """Drafts with a chosen number of accepted tokens each; after the first mismatch, about half of the
    positions agree again, so counting all matches instead of the leading ones gives a different answer.
    Past the draft, the buffer holds stale tokens; in about half the sequences the first of them equals the
    target's bonus token, so comparing past draft_len gives a different answer too."""
    vocab = 1000
    lengths = rng.integers(0, g + 1, batch) if lengths is None else np.asarray(lengths)
    draft = rng.integers(1, vocab, (batch, g))          # stale tokens, overwritten below up to n
    target = np.full((batch, g + 1), PAD_TOKEN, dtype=np.int64)
    for b in range(batch):
        n = int(lengths[b])
        tokens = rng.integers(1, vocab, n + 1)
        target[b, :n + 1] = tokens
        draft[b, :n] = tokens[:n]
        k = int(rng.integers(0, n + 1))                 # the true number of accepted tokens
        if accepts is not None and accepts[b] is not None:
            k = accepts[b]
        if k < n:
            draft[b, k] = tokens[k] % (vocab - 1) + 1   # a different token: rejected here
            later = np.arange(k + 1, n)
            flip = later[rng.random(later.size) < 0.5]
            draft[b, flip] = target[b, flip] % (vocab - 1) + 1
        if n < g and rng.random() < 0.5:
            draft[b, n] = target[b, n]                  # a stale token that happens to equal the bonus
    return _case(name, draft, lengths, target, note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 46)
    example_draft = np.array([[11, 42, 7, 7], [5, 6, 8, 1], [0, 0, 0, 0]])
    example_target = np.array([[11, 42, 9, 7, 3], [5, 6, 8, 0, 0], [4, 0, 0, 0, 0]])
    batch = size(rng, 33, 47, not_multiple_of=4)
    return (
        _case("worked examples", example_draft, np.array([4, 2, 0]), example_target,
              "the three examples from the description"),
        _batch(rng, f"batch of {batch}, drafts of up to 8", batch, 8,
               f"{batch} is not a multiple of 4: the last block has {batch % 4} sequences and {4 - batch % 4} "
               "idle warps"),
        _batch(rng, "all accepted", 6, 8, "every draft is fully accepted: next_token is the bonus token "
               "target[b, n]", lengths=[8, 8, 3, 1, 8, 5], accepts=[8, 8, 3, 1, 8, 5]),
        _batch(rng, "drafts of 32, a full warp", 9, 32, "all 32 lanes check a position; in sequence 0 the "
               "only mismatch is at lane 31, the mask's top bit (a negative int32)",
               lengths=[32, 32, 31, 17, 32, 0, 25, 32, 9],
               accepts=[31, 0, None, None, 32, None, None, None, 4]),
        _batch(rng, "empty drafts", 5, 4, "draft_len = 0 everywhere: accepted = 0, next_token = target[b, 0]",
               lengths=[0, 0, 0, 0, 0]),
    )


PUZZLE = Puzzle(
    slug="speculative-verify",
    number=46,
    title="Speculative decoding: verify",
    chapter=7,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("speculative_verify",),
    spec=spec,
    make_cases=make_cases,
    outputs=("accepted", "next_token"),
    constraints=(
        max_global_writes_per_thread(1, "accepted"),
        max_global_writes_per_thread(1, "next_token"),
        no_atomics(),
    ),
    stars=(
        Star(2, "one warp per sequence: at most 4 global reads per thread",
             (max_global_reads_per_thread(4),)),
    ),
    hints=(
        "Lane i of the sequence's warp: `rejected = i < n and draft[b, i] != target[b, i]` with "
        "`n = draft_len[b]` (the `i < n` test first, so lanes past the draft read nothing).",
        "`mask = cuda.ballot_sync(0xFFFFFFFF, rejected)`; every lane gets the same mask. The accepted length "
        "is `cuda.ffs(mask) - 1` when `mask != 0`, and `n` when it is 0.",
        "Guard the whole body with `if b < batch:` (a missing sequence's warp skips as a whole, so the "
        "full-mask ballot stays valid), and let lane 0 write `accepted[b] = a` and "
        "`next_token[b] = target[b, a]`.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n draft positions: n / WARP sequences with drafts of up to WARP tokens, one warp each."""
    rng = np.random.default_rng(8046)
    batch, vocab = max(1, n // WARP), 1000
    lengths = rng.integers(0, WARP + 1, batch)
    target = rng.integers(1, vocab, (batch, WARP + 1))
    target[np.arange(WARP + 1)[None, :] > lengths[:, None]] = PAD_TOKEN
    draft = target[:, :WARP].copy()
    stale = np.arange(WARP)[None, :] >= lengths[:, None]
    draft[stale] = rng.integers(1, vocab, int(stale.sum()))
    accepted = (rng.random(batch) * (lengths + 1)).astype(np.int64)    # the true answer, 0..n
    rejected = np.flatnonzero(accepted < lengths)
    draft[rejected, accepted[rejected]] = target[rejected, accepted[rejected]] % (vocab - 1) + 1
    return _case(f"bench batch={batch}", draft, lengths, target, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
