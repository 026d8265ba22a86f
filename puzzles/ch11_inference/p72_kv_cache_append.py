"""Puzzle 72 — KV-cache append: scatter the new tokens' keys and values into a paged cache (vLLM's
reshape_and_cache)."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread, no_atomics

H = 4                    # heads
D = 32                   # head dimension: one warp per (token, head)
PAGE = 16                # tokens per page
PAD_SLOT = -1            # slot of a padding token: write nothing

READING = ("*Efficient Memory Management for Large Language Model Serving with PagedAttention* (2023) — "
           "Kwon et al. (vLLM): the KV cache manager and its block tables")

DESCRIPTION = f"""\
# Puzzle 72 — KV-cache append

Each step of decoding produces, for every token in the batch, a key and a value per head. Before
attention can use them they must be stored in the **KV cache**, where they stay for the rest of the
sequence's life. The cache is paged as in puzzle 45: page `p` of `k_cache` is a `({H}, {PAGE}, {D})` slab,
heads outermost, so that one head's keys of one page are {PAGE} x {D} contiguous floats — the order an
attention kernel wants to read them in.

The new keys arrive in the order the QKV projection made them: `k_new[token, head, :]`. The scheduler has
already chosen where each token goes and tells you in `slot_mapping[token]`, a *slot* number:

    page = slot // {PAGE},   offset = slot % {PAGE}
    k_cache[page, h, offset, :] = k_new[token, h, :]        for every head h (and the same for v)

A slot of **{PAD_SLOT}** marks a padding token (engines pad the batch to a fixed size so one captured CUDA
graph serves every step): write nothing for it. Every other slot of the cache holds the keys of earlier
tokens and must not change.

**Example** (`PAGE = {PAGE}`): `slot_mapping = [37, 2, {PAD_SLOT}]`. Token 0 goes to page 2, offset 5: for each
head `h`, `k_cache[2, h, 5, :] = k_new[0, h, :]`. Token 1 goes to page 0, offset 2. Token 2 is padding.

```
k_new (token-major)                     k_cache (page-major, then head, then offset)
token 0: [h0 | h1 | h2 | h3]            page 2:  h0: off 0 1 2 3 4 [5] 6 ... 15
               \\    \\    \\                       h1: off 0 1 2 3 4 [5] 6 ... 15
                `----`----`--- slot 37 ->        h2: ...          [5]
                                                  h3: ...          [5]
```

**What's new:** a scatter through an index array, with a change of layout on the way: neighbouring
values of `k_new` (one head of one token) stay neighbours in the cache, but the heads of one token land
{PAGE * D * 4} bytes apart.

**Launch:** one block per token (`grid = num_tokens`), block `({D}, {H})`: `threadIdx.x` is the position
`d` in the head, `threadIdx.y` the head — each warp moves one head of one token. Rules: read each value of
`k_new` and `v_new` at most once and `slot_mapping` once per thread; write each cache element at most
once; never read the cache. ★★: every warp's loads and stores are perfectly coalesced — neighbouring
lanes take neighbouring values (a warp that takes every fourth value of the token moves 4 times the
sectors).

**Read more:** {READING}
"""


def spec(k_new: np.ndarray, v_new: np.ndarray, slot_mapping: np.ndarray, k_cache: np.ndarray,
         v_cache: np.ndarray) -> dict[str, np.ndarray]:
    k_out, v_out = k_cache.copy(), v_cache.copy()
    for token, slot in enumerate(slot_mapping):
        if slot == PAD_SLOT:
            continue
        page, offset = divmod(int(slot), PAGE)
        k_out[page, :, offset, :] = k_new[token]
        v_out[page, :, offset, :] = v_new[token]
    return {"k_cache": k_out, "v_cache": v_out}


def _case(name: str, rng: np.random.Generator, slots: list[int], num_pages: int, note: str) -> Case:
    """Old tokens fill the cache with numbers; the slots about to be written hold NaN, so a token the
    kernel skips is caught, and every other slot must come out unchanged."""
    slots_arr = np.asarray(slots, dtype=np.int32)
    valid = slots_arr[slots_arr != PAD_SLOT]
    assert np.unique(valid).size == valid.size and (valid < num_pages * PAGE).all()
    t = slots_arr.size
    k_cache = rng.normal(0, 1, (num_pages, H, PAGE, D)).astype(np.float32)
    v_cache = rng.normal(0, 1, (num_pages, H, PAGE, D)).astype(np.float32)
    pages, offsets = np.divmod(valid, PAGE)
    k_cache[pages, :, offsets, :] = np.nan
    v_cache[pages, :, offsets, :] = np.nan
    buffers = {
        "k_new": rng.normal(0, 1, (t, H, D)).astype(np.float32),
        "v_new": rng.normal(0, 1, (t, H, D)).astype(np.float32),
        "slot_mapping": slots_arr,
        "k_cache": k_cache,
        "v_cache": v_cache,
    }
    step = LaunchStep("kv_cache_append", grid=t, block=(D, H),
                      args=("k_new", "v_new", "slot_mapping", "k_cache", "v_cache"))
    return Case(name, buffers, (step,), note)


def _batch_slots(rng: np.random.Generator, num_pages: int, prefill: int, decodes: int, padding: int) -> list[int]:
    """A prefill of ``prefill`` tokens into fresh pages, ``decodes`` sequences adding one token each at a
    random position of their last page, then ``padding`` padding tokens."""
    pages = list(rng.permutation(num_pages))
    slots: list[int] = []
    for i in range(prefill):                           # consecutive offsets, a new page every PAGE tokens
        if i % PAGE == 0:
            page = int(pages.pop())
        slots.append(page * PAGE + i % PAGE)
    for _ in range(decodes):
        slots.append(int(pages.pop()) * PAGE + int(rng.integers(0, PAGE)))
    return slots + [PAD_SLOT] * padding


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(72) if rng is None else rng
    num_pages = 12
    prefill = int(rng.integers(PAGE + 1, 2 * PAGE))     # spills into a second page
    decodes = int(rng.integers(3, 7))
    return (
        _case("worked example", np.random.default_rng(72), [37, 2, PAD_SLOT], 4,
              "the example of the description: page 2 offset 5, page 0 offset 2, one padding token"),
        _case(f"prefill of {prefill} + {decodes} decodes + 3 padding", rng,
              _batch_slots(rng, num_pages, prefill, decodes, 3), num_pages,
              "a prompt filling one page and part of the next, decode tokens scattered over other pages, and "
              "padding tokens whose keys must not land anywhere"),
        _case("first and last slot of a page", rng, [5 * PAGE - 1, 0, 3 * PAGE, 6 * PAGE - 1], 6,
              "offsets 15 and 0, page 0 and the last page of the cache: an off-by-one in page or offset shows"),
        _case("one token", rng, [int(rng.integers(0, 3 * PAGE))], 3, "a batch of one decode token"),
        _case("only padding", rng, [PAD_SLOT] * 4, 2, "nothing may be written at all"),
    )


def decode_slots(rng: np.random.Generator, tokens: int, num_pages: int) -> list[int]:
    """One decode token for each of ``tokens`` sequences: a random offset of a page no other token uses."""
    return (rng.permutation(num_pages)[:tokens] * PAGE + rng.integers(0, PAGE, tokens)).tolist()


def dense_slots(rng: np.random.Generator, tokens: int) -> tuple[list[int], int]:
    """``tokens`` distinct slots scattered over a cache just big enough for them: (slots, pages)."""
    pages = tokens // PAGE + 2
    return rng.choice(pages * PAGE, tokens, replace=False).tolist(), pages


def bench(n: int) -> Case:
    """About n cache elements written per cache: n / (H * D) tokens, in a cache about that size."""
    tokens = max(1, n // (H * D))
    rng = np.random.default_rng(72)
    slots, pages = dense_slots(rng, tokens)
    return _case(f"bench {tokens} tokens", rng, slots, pages, "graduate-mode timing")


PUZZLE = Puzzle(
    slug="kv-cache-append",
    number=72,
    title="KV-cache append",
    chapter=11,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("kv_cache_append",),
    spec=spec,
    make_cases=make_cases,
    outputs=("k_cache", "v_cache"),
    constraints=(
        max_global_reads_per_thread(1, "k_new"),
        max_global_reads_per_thread(1, "v_new"),
        max_global_reads_per_thread(1, "slot_mapping"),
        max_global_reads_per_thread(0, "k_cache"),
        max_global_reads_per_thread(0, "v_cache"),
        max_global_writes_per_thread(1, "k_cache"),
        max_global_writes_per_thread(1, "v_cache"),
        no_atomics(),
    ),
    stars=(
        Star(2, "perfectly coalesced: each warp reads and writes one head's 32 contiguous floats",
             (ideal_coalescing(),)),
    ),
    hints=(
        "Token = `cuda.blockIdx.x`, head = `cuda.threadIdx.y`, d = `cuda.threadIdx.x`. Read the slot first; "
        f"a padding slot ({PAD_SLOT}) means return.",
        "`page = slot // PAGE`, `offset = slot % PAGE`; then one copy per cache.",
        "`k_cache[page, h, offset, d] = k_new[token, h, d]` and the same line for `v`.",
    ),
    reading=READING,
    bench=bench,
)
