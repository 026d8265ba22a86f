"""Puzzle 45 — Paged attention: one decode step, reading K and V through a block table (vLLM)."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import max_global_reads_per_thread, max_global_writes_per_thread, no_atomics

D = 16                   # head dimension
PAGE = 8                 # tokens per page (vLLM calls it the block size)
TPB = 64                 # threads per block: one block per sequence, one thread per token
MAX_PAGES = TPB // PAGE  # a sequence holds at most 64 tokens = 8 pages
PAD = -1                 # unused entries of the block table

READING = ("*Efficient Memory Management for Large Language Model Serving with PagedAttention* (2023) — "
           "Kwon et al. (vLLM), section 4.1")

DESCRIPTION = f"""\
# Puzzle 45 — Paged attention (one decode step)

A serving engine keeps the keys and values of every running sequence in a **KV cache**. Giving each
sequence one contiguous slab wastes memory (nobody knows in advance how long a sequence will grow), so
vLLM cuts the cache into fixed-size **pages** of {PAGE} tokens and gives each sequence a **block table**:
the list of physical pages that hold its tokens, in order. Token `t` of sequence `b` lives at

    page = block_table[b, t // {PAGE}],   slot = t % {PAGE}:   k_cache[page, slot, :],  v_cache[page, slot, :]

```
block_table[0] = [5, 2, 9, -1, ...]   seq 0, 19 tokens: 0-7 in page 5, 8-15 in page 2, 16-18 in page 9
                                                        (slots 3-7 of page 9 are not used yet)
block_table[1] = [7, -1, ...]         seq 1, 4 tokens:  0-3 in page 7 (slots 4-7 not used yet)
k_cache:  | page 0 | page 1 | page 2: seq 0 | ... | page 5: seq 0 | ... | page 7: seq 1 | ...
```

At a decode step each sequence has **one new query** `q[b]` (its K/V are already in the cache). Compute
its attention over its `seq_lens[b]` cached tokens:

    s_t    = (q[b] . k[token t]) * scale          for t < seq_lens[b]
    out[b] = sum over t of softmax(s)_t * v[token t]

**Example** (D = 2, PAGE = 2, scale = 1): `seq_lens = [3]`, `block_table = [[4, 1]]`,
`q = [[1, 1]]`; page 4 holds k = [0, 1], [1, 1] and v = [2, 0], [0, 2]; page 1 slot 0 holds
k = [2, 1], v = [4, 4] (slot 1 is unused). Scores `[1, 2, 3]`, softmax `[0.0900, 0.2447, 0.6652]`,
`out = [0.0900*2 + 0.6652*4, 0.2447*2 + 0.6652*4] = [2.8410, 3.1504]`.

Unused slots and pages hold NaN here, and unused block-table entries are {PAD}: read only what
`seq_lens` allows. Two sequences may share a page (a common prompt prefix, stored once).

**What's new:** indirection — every address of K and V goes through the block table first. The softmax
is the block-wide max and sum of puzzle 43.

**Launch:** one block of {TPB} threads per sequence (`grid = batch`); thread `t` owns token `t` (sequences
hold 1 to {TPB} tokens). A good plan: (1) thread t finds its page, computes `s_t`, and notes the page in
shared memory; (2) block max and block sum give `p_t`, kept in shared memory; (3) threads `c < {D}`
compute `out[b, c] = sum over t of p_t * v[token t, c]`. Write each output once. ★★: look up the block
table once per token — at most 1 read of `block_table` per thread (keep the page numbers in shared
memory for step 3).

**Read more:** {READING}
"""


def spec(q: np.ndarray, k_cache: np.ndarray, v_cache: np.ndarray, block_table: np.ndarray,
         seq_lens: np.ndarray, out: np.ndarray, scale: float) -> dict[str, np.ndarray]:
    page = k_cache.shape[1]
    result = np.empty((q.shape[0], q.shape[1]), dtype=np.float64)
    for b in range(q.shape[0]):
        t = np.arange(seq_lens[b])
        pages = block_table[b, t // page]
        keys = k_cache[pages, t % page].astype(np.float64)
        values = v_cache[pages, t % page].astype(np.float64)
        s = keys @ q[b].astype(np.float64) * scale
        e = np.exp(s - s.max())
        result[b] = (e / e.sum()) @ values
    return {"out": result.astype(np.float32)}


def _case(name: str, rng: np.random.Generator, seq_lens: list[int], n_pages: int, note: str,
          shared_prefix: bool = False, q_scale: np.ndarray | None = None, k_offset: float = 0.0,
          spikes: tuple[int, ...] = ()) -> Case:
    """Sequences of the given lengths, their pages scattered at random over a cache of ``n_pages``; with
    ``spikes``, token ``spikes[b]`` of sequence b gets a key that scores 120 against its query."""
    batch = len(seq_lens)
    pages_needed = [(n + PAGE - 1) // PAGE for n in seq_lens]
    free = list(rng.permutation(n_pages))
    table = np.full((batch, MAX_PAGES), PAD, dtype=np.int32)
    k_cache = np.full((n_pages, PAGE, D), np.nan, dtype=np.float32)
    v_cache = np.full((n_pages, PAGE, D), np.nan, dtype=np.float32)
    for b, (n, count) in enumerate(zip(seq_lens, pages_needed)):
        for i in range(count):
            if shared_prefix and b == 1 and i == 0:
                table[b, 0] = table[0, 0]            # sequence 1 reuses sequence 0's first page
                continue
            p = int(free.pop())
            table[b, i] = p
            used = min(PAGE, n - i * PAGE)
            k_cache[p, :used] = rng.normal(k_offset, 1.5 if not k_offset else 0.5, (used, D))
            v_cache[p, :used] = rng.normal(0, 1, (used, D))
    q = rng.normal(0, 1.5, (batch, D))
    if k_offset:
        q = -np.abs(q)          # every key leans the same way, every query the other: all scores negative
    if q_scale is not None:
        q = q * np.asarray(q_scale)[:, None]
    for b, tok in enumerate(spikes):
        k_cache[table[b, tok // PAGE], tok % PAGE] = q[b] * (120.0 * D ** 0.5 / (q[b] @ q[b]))
    buffers = {
        "q": q.astype(np.float32),
        "k_cache": k_cache,
        "v_cache": v_cache,
        "block_table": table,
        "seq_lens": np.asarray(seq_lens, dtype=np.int32),
        "out": np.full((batch, D), np.nan, dtype=np.float32),
        "scale": 1.0 / D ** 0.5,
    }
    step = LaunchStep("paged_attention", grid=batch, block=TPB,
                      args=("q", "k_cache", "v_cache", "block_table", "seq_lens", "out", "scale"))
    return Case(name, buffers, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 45)
    first, last = size(rng, 33, 39), size(rng, 17, 23)
    return (
        _case("batch of 5, scattered pages", rng, [first, 1, 64, 8, last], 24,
              f"lengths {first} and {last} end inside a page (the rest of it is NaN); 64 fills all 8 pages; 1 and 8 "
              "are one token and exactly one page"),
        _case("shared prefix page", rng, [19, 12, 9], 10,
              "sequences 0 and 1 share their first physical page (prefix caching)", shared_prefix=True),
        _case("large logits", rng, [30, 50], 16,
              "queries scaled up so the scores reach the hundreds: subtract the maximum before exp",
              q_scale=[25.0, -25.0]),
        _case("negative scores", rng, [13, 40], 12,
              "every score far below 0 (around -200): a max that starts at 0 instead of -inf underflows "
              "every exp", q_scale=[12.0, 12.0], k_offset=3.0),
        _case("one sequence of one token", rng, [1], 3,
              "softmax of one score is 1: out = that token's value"),
        _case("one spike per sequence", rng, [64, 64, 42], 24,
              "tokens 63, 1 and 41 score 120 against their query, the rest a few units: a max tree that skips "
              "any thread's score subtracts too small a max, and exp overflows", spikes=(63, 1, 41)),
    )


PUZZLE = Puzzle(
    slug="paged-attention",
    number=45,
    title="Paged attention",
    chapter=7,
    difficulty=4,
    description=DESCRIPTION,
    kernels=("paged_attention",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_writes_per_thread(1, "out"),
        max_global_reads_per_thread(D, "k_cache"),
        no_atomics(),
    ),
    stars=(
        Star(2, "one block-table lookup per token: at most 1 read of block_table per thread",
             (max_global_reads_per_thread(1, "block_table"),)),
    ),
    hints=(
        "Thread t with t < n = seq_lens[b]: `page = block_table[b, t // PAGE]`, `slot = t % PAGE`, "
        "`s = dot(q[b, :], k_cache[page, slot, :]) * scale`. Threads with t >= n use s = -inf and must "
        "not touch the cache (its unused slots are NaN).",
        "Then the stable softmax of puzzle 43 over the block: shared-memory tree max, barrier, "
        "`e = exp(s - max)` (0 for t >= n), tree sum, `probs[t] = e / sum`. Store `pages[t] = page` in a "
        "shared int32 array as well, and put a barrier before step 3.",
        "Step 3, for threads c < D: `acc += probs[j] * v_cache[pages[j], j % PAGE, c]` for j < n, where "
        "`pages[j]` is the page thread j looked up in step 1; then `out[b, c] = acc`.",
    ),
    reading=READING,
    rtol=1e-4,
    atol=5e-5,   # float32 softmax-weighted sums of up to 64 values; fresh random cases each check
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n multiply-adds per product: n / (TPB * D) sequences of TPB tokens, their pages shuffled."""
    rng = np.random.default_rng(8045)
    batch = max(1, n // (TPB * D))
    n_pages = batch * MAX_PAGES
    buffers = {
        "q": rng.standard_normal((batch, D), dtype=np.float32) * np.float32(1.5),
        "k_cache": rng.standard_normal((n_pages, PAGE, D), dtype=np.float32) * np.float32(1.5),
        "v_cache": rng.standard_normal((n_pages, PAGE, D), dtype=np.float32),
        "block_table": rng.permutation(n_pages).astype(np.int32).reshape(batch, MAX_PAGES),
        "seq_lens": np.full(batch, TPB, dtype=np.int32),
        "out": np.full((batch, D), np.nan, dtype=np.float32),
        "scale": 1.0 / D ** 0.5,
    }
    step = LaunchStep("paged_attention", grid=batch, block=TPB,
                      args=("q", "k_cache", "v_cache", "block_table", "seq_lens", "out", "scale"))
    return Case(f"bench batch={batch}, {TPB} tokens each", buffers, (step,))


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
