"""Puzzle 73 — Int8 KV cache: quantise each new token's key and value per head (absmax, one scale per
token and head) while appending it to the paged cache."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    no_atomics,
    no_shared,
)

from .int8 import clear_of_ties
from .p72_kv_cache_append import decode_slots, dense_slots

H = 4                    # heads
D = 32                   # head dimension = one warp
PAGE = 16                # tokens per page
PAD_SLOT = -1
Q_MAX = 127              # symmetric int8: -127..127
EMPTY = -128             # the value slots about to be written start with: symmetric quantisation never makes it

READING = ("*A Visual Guide to Quantization* — Maarten Grootendorst (symmetric absmax quantisation); and "
           "*LLM.int8()* (2022) — Dettmers et al. (one scale per vector instead of one per tensor)")

DESCRIPTION = f"""\
# Puzzle 73 — Int8 KV cache

At decode time every generated token reads the whole KV cache of its sequence, so the cache's size *is*
the cost (and it decides how many sequences fit on the GPU at once). Storing it in int8 instead of float32
moves a quarter of the bytes. Keys have a few large channels, so one scale for the whole cache would waste
the int8 range: give every **(token, head)** its own scale.

Append as in puzzle 72 (`page = slot // {PAGE}`, `offset = slot % {PAGE}`, slot {PAD_SLOT} = padding), but
quantise on the way, for the key and the value separately:

    amax  = max over d of |k_new[token, h, d]|
    scale = amax / {Q_MAX}                                  (float32; 0 when amax = 0)
    k_cache[page, h, offset, d] = round(k_new[token, h, d] / scale)     (int8; 0 when scale = 0)
    k_scale[page, h, offset]    = scale

`round` is Python's `round` (to the nearest integer, halves to even — what the GPU's `rint` does), computed
in float32 exactly as written: `x / scale` with `scale = amax / {Q_MAX}`. (No random value's quotient lies
within 2^-12 of a half, so `x * (1 / scale)` rounds the same; the halves one case holds are exact.) An
attention kernel reads back `k = k_cache * k_scale`.

**Example** (a head of 4 values instead of {D}): `k_new = [0.5, -2.54, 1.0, 0.02]`: `amax = 2.54`,
`scale = 0.02`, `k_cache = [25, -127, 50, 1]`, `k_scale = 0.02`. Per (token, head) the cache now
holds {D} bytes and one 4-byte scale: {D + 4} bytes instead of {4 * D}.

```
warp (token t, head h):  lane d holds x = k_new[t, h, d]
   |x| ──shfl_xor 16, 8, 4, 2, 1──► every lane has amax      (no shared memory, no barrier)
   lane d: k_cache[page, h, off, d] = round(x / scale)       32 int8 = one 32-byte sector
   lane 0: k_scale[page, h, off] = scale
```

**What's new:** a reduction inside one warp, with every lane getting the answer (`cuda.shfl_xor_sync`, the
butterfly of puzzle 21), feeding a quantisation: the scale has to be known before any value is stored.

**Launch:** one block per token, block `({D}, {H})`: `threadIdx.x` is `d`, `threadIdx.y` the head (one warp
each). Rules: no shared memory; read each input value once; write each cache element and each scale at
most once (one lane writes the scale). Slots that are about to be written start as {EMPTY} (int8) and NaN
(scales); everything else must stay as it is. ★★: perfectly coalesced loads and stores.

**Read more:** {READING}
"""


def quantize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row symmetric int8 quantisation of ``x`` (..., D), in float32 exactly as the description says."""
    x = np.asarray(x, dtype=np.float32)
    amax = np.abs(x).max(axis=-1)
    scale = (amax / np.float32(Q_MAX)).astype(np.float32)
    safe = np.where(scale == 0, np.float32(1), scale)[..., None]
    q = np.where(scale[..., None] == 0, 0, np.rint(x / safe))
    return q.astype(np.int8), scale


def spec(k_new: np.ndarray, v_new: np.ndarray, slot_mapping: np.ndarray, k_cache: np.ndarray,
         v_cache: np.ndarray, k_scale: np.ndarray, v_scale: np.ndarray) -> dict[str, np.ndarray]:
    out = {"k_cache": k_cache.copy(), "v_cache": v_cache.copy(), "k_scale": k_scale.copy(),
           "v_scale": v_scale.copy()}
    for name, new in (("k", k_new), ("v", v_new)):
        q, s = quantize(new)
        for token, slot in enumerate(slot_mapping):
            if slot == PAD_SLOT:
                continue
            page, offset = divmod(int(slot), PAGE)
            out[f"{name}_cache"][page, :, offset, :] = q[token]
            out[f"{name}_scale"][page, :, offset] = s[token]
    return out


def _values(rng: np.random.Generator, t: int) -> np.ndarray:
    """Keys with a spread of magnitudes per head, and a few large channels (as real keys have)."""
    x = rng.normal(0, 1, (t, H, D)) * rng.uniform(0.05, 3, (t, H, 1))
    big = rng.random((t, H, D)) < 0.05
    return np.where(big, x * 8, x).astype(np.float32)


def _clear(x: np.ndarray, ties: np.ndarray | None = None) -> np.ndarray:
    """``x`` with every quotient x / scale moved off the rounding ties (``int8.clear_of_ties``) but ``ties``."""
    return clear_of_ties(x, np.abs(np.asarray(x, np.float32)).max(axis=-1, keepdims=True), Q_MAX, ties=ties)


def _case(name: str, rng: np.random.Generator, slots: list[int], num_pages: int, note: str,
          k_new: np.ndarray | None = None, v_new: np.ndarray | None = None, ties: np.ndarray | None = None) -> Case:
    """A case; every new key and value is kept off the int8 rounding ties except the exact ``ties`` of k."""
    slots_arr = np.asarray(slots, dtype=np.int32)
    valid = slots_arr[slots_arr != PAD_SLOT]
    assert np.unique(valid).size == valid.size and (valid < num_pages * PAGE).all()
    t = slots_arr.size
    shape = (num_pages, H, PAGE, D)
    caches = {n: rng.integers(-Q_MAX, Q_MAX + 1, shape).astype(np.int8) for n in ("k_cache", "v_cache")}
    scales = {n: rng.uniform(0.001, 0.05, shape[:3]).astype(np.float32) for n in ("k_scale", "v_scale")}
    pages, offsets = np.divmod(valid, PAGE)
    for c in caches.values():
        c[pages, :, offsets, :] = EMPTY
    for s in scales.values():
        s[pages, :, offsets] = np.nan
    buffers = {
        "k_new": _clear(_values(rng, t) if k_new is None else k_new, ties),
        "v_new": _clear(_values(rng, t) if v_new is None else v_new),
        "slot_mapping": slots_arr,
        **caches, **scales,
    }
    step = LaunchStep("kv_cache_append_int8", grid=t, block=(D, H),
                      args=("k_new", "v_new", "slot_mapping", "k_cache", "v_cache", "k_scale", "v_scale"))
    return Case(name, buffers, (step,), note)


def _special_heads(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Token 0: head 0 all zeros, head 1 one value far above the rest, head 2 with its largest value
    negative, head 3 with values that land on exact halves (x / scale = k + 0.5)."""
    k = _values(rng, 2)
    k[0, 0] = 0.0
    k[0, 1] = rng.normal(0, 0.01, D)
    k[0, 1, 7] = 5.0
    k[0, 2, 3] = -np.abs(k[0, 2]).max() * 1.5
    halves = (np.arange(D) % 9 - 4 + 0.5).astype(np.float32)            # -3.5 .. 4.5
    halves[0] = 127.0                                                    # amax = 127, so scale = 1
    k[0, 3] = halves
    return k, _values(rng, 2)


def _exact_halves() -> np.ndarray:
    """Where _special_heads puts its exact halves: scale 1, so every float32 formulation gets k + 0.5."""
    ties = np.zeros((2, H, D), dtype=bool)
    ties[0, 3] = True
    return ties


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(73) if rng is None else rng
    example = np.zeros((1, H, D), np.float32)
    example[0, :, :4] = [0.5, -2.54, 1.0, 0.02]
    k_special, v_special = _special_heads(rng)
    decodes = int(rng.integers(10, 20))
    return (
        _case("worked example", np.random.default_rng(73), [37], 4,
              f"the example of the description (every head the same; the other {D - 4} values are 0)",
              k_new=example, v_new=-example),
        _case(f"{decodes} decode tokens + 2 padding", rng,
              decode_slots(rng, decodes, 24) + [PAD_SLOT] * 2, 24,
              "scales vary from token to token and head to head; padding writes nothing"),
        _case("zero head, one outlier, negative max, exact halves", rng, [PAGE - 1, 2 * PAGE], 3,
              "amax = 0 gives scale 0 and zeros; the largest |x| may be negative; x / scale = k + 0.5 "
              "rounds to the even neighbour (truncation or round-half-up differ)",
              k_new=k_special, v_new=v_special, ties=_exact_halves()),
        _case("prefill of 20 tokens", rng, list(range(3 * PAGE + 4, 3 * PAGE + 24)), 5,
              "consecutive offsets crossing into the next page"),
        _case("slot 0 and padding", rng, [1, PAD_SLOT, 0], 2,
              "slot 0 (page 0, offset 0) is a real slot: only a negative slot is padding"),
    )


def bench(n: int) -> Case:
    """About n values quantised per cache: n / (H * D) decode tokens."""
    tokens = max(1, n // (H * D))
    rng = np.random.default_rng(73)
    slots, pages = dense_slots(rng, tokens)
    return _case(f"bench {tokens} tokens", rng, slots, pages, "graduate-mode timing")


PUZZLE = Puzzle(
    slug="kv-cache-int8",
    number=73,
    title="Int8 KV cache",
    chapter=11,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("kv_cache_append_int8",),
    spec=spec,
    make_cases=make_cases,
    outputs=("k_cache", "v_cache", "k_scale", "v_scale"),
    constraints=(
        no_shared("the 32 values of a head live in one warp: reduce them with shuffles"),
        max_global_reads_per_thread(1, "k_new"),
        max_global_reads_per_thread(1, "v_new"),
        max_global_writes_per_thread(1, "k_cache"),
        max_global_writes_per_thread(1, "v_cache"),
        max_global_writes_per_thread(1, "k_scale"),
        max_global_writes_per_thread(1, "v_scale"),
        no_atomics(),
    ),
    stars=(
        Star(2, "perfectly coalesced loads and stores", (ideal_coalescing(),)),
    ),
    hints=(
        "Each lane holds one value of its head. After the butterfly "
        "`m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, off))` for off = 16, 8, 4, 2, 1, every lane has "
        "the head's absmax — no lane has to broadcast it.",
        "Read the slot first and return for padding (the whole block does, so no shuffle is left half "
        "empty). Then `scale = amax / numba.float32(127)` (stay in float32) and `q = round(x / scale)`, "
        "0 when the scale is 0.",
        "Do it twice, for k and for v: `k_cache[page, h, offset, d] = qk`, and "
        "`if d == 0: k_scale[page, h, offset] = scale_k`.",
    ),
    reading=READING,
    bench=bench,
)
