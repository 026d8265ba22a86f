"""Puzzle 56 — bf16 round to nearest even: narrow float32 to bf16 by hand, bit by bit."""

from __future__ import annotations

import numpy as np

from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import (
    ideal_coalescing,
    max_global_reads_per_thread,
    max_global_writes_per_thread,
    no_atomics,
)

from .bf16 import QUIET_NAN, bits_float, round_nearest_even

TPB = 128
SHARED_BYTES = TPB * 4          # one 4-byte word per thread, seen as float32 and as uint32
SENTINEL = 0xFFDE               # a NaN pattern no rounding produces (every NaN becomes 0x7FC0)

READING = ("*Mixed Precision Training* (2017) — Micikevicius et al., and the mixed-precision section of "
           "*Let's reproduce GPT-2 (124M)* — Andrej Karpathy (why bf16 keeps float32's exponent)")

DESCRIPTION = f"""\
# Puzzle 56 — bf16: round to nearest even

bf16 ("brain float") is the **top half of a float32**: the same sign bit and 8-bit exponent, but only 7 of
the 23 mantissa bits. It covers the same range as float32 (up to 3.4e38, down to 1e-38), so training in
bf16 needs no loss scaling — but it has only 8 significant bits, about 2-3 decimal digits.

```
float32   s eeeeeeee mmmmmmm mmmmmmmmmmmmmmmm        bits 31 .. 0
          |------- kept: bf16 -------|-- dropped --|
bf16      s eeeeeeee mmmmmmm                         the top 16 bits
```

NumPy has no bf16 type, so bf16 tensors here are `uint16` arrays of bit patterns. Write
`out[i] = bf16(x[i])`: keep the top 16 bits of `x[i]` and **round** on the dropped 16:

* dropped half above `0x8000`: round the kept half up (add 1); below: keep it as it is;
* exactly `0x8000` (halfway): round up only if the kept half is odd — **ties to even**, so ties do not
  all go one way and no bias builds up;
* **NaN** (exponent all ones, mantissa not zero): write `0x{QUIET_NAN:04X}`. Rounding a NaN like a number
  can carry into the exponent: `0x7F800001` would become `0x7F80`, infinity; `0x7FFFFFFF` would wrap
  past the sign to `0x8000`, minus zero. (Any NaN pattern would be correct bf16 — PyTorch's scalar
  conversion picks `0x7FC0`, CUDA's `__float2bfloat16_rn` `0x7FFF` — this puzzle asks for `0x7FC0`.)

Adding 1 to the kept half may carry into the exponent, and that is right: the largest float32 rounds to
infinity, the largest subnormal to the smallest normal. One line does all the non-NaN cases:
`(u + 0x7FFF + ((u >> 16) & 1)) >> 16` — work out why the `& 1` gives ties to even.

**Example:**

| x | float32 bits | kept, dropped | bf16 | value |
|---|---|---|---|---|
| 3.1415927 | `0x40490FDB` | `0x4049`, `0x0FDB` | `0x4049` | 3.140625 |
| -0.1 | `0xBDCCCCCD` | `0xBDCC`, `0xCCCD` | `0xBDCD` | -0.10009766 |
| 1.00390625 | `0x3F808000` | `0x3F80`, `0x8000` (tie, even) | `0x3F80` | 1.0 |
| 1.01171875 | `0x3F818000` | `0x3F81`, `0x8000` (tie, odd) | `0x3F82` | 1.015625 |
| 3.4028235e38 | `0x7F7FFFFF` | `0x7F7F`, `0xFFFF` | `0x7F80` | inf |

**Getting at the bits.** A kernel cannot reinterpret a float32 register as an integer in the subset
gpusim runs (CUDA C has `__float_as_uint`). numba-cuda documents another way: all dynamic shared arrays of
a kernel start at the same address, so two of them with different dtypes **alias**:

```python
as_float = cuda.shared.array(0, numba.float32)  # {SHARED_BYTES} bytes: one word per thread
as_bits = cuda.shared.array(0, numba.uint32)    # the same words, read as uint32
as_float[t] = x[i]
cuda.threadfence_block()   # the compiler does not know they alias: read after the write
u = as_bits[t]             # the float's 32 bits
```

Each thread uses only its own word, so no barrier is needed. Write the rounding as a
`@cuda.jit(device=True)` function of the bits: the next puzzles reuse it.

**What's new:** a number format is just bits: narrowing float32 to bf16 is integer work on its bit pattern,
and round-to-nearest-even is the rule every conversion unit implements.

**Launch:** grid `ceil(n / {TPB})`, block {TPB}, {SHARED_BYTES} bytes of dynamic shared memory; one thread
per element, guarded. `x` float32 `(n,)`; `out` uint16 `(n,)`, compared bit for bit. One read of `x` and
one write of `out` per thread.

**Read more:** {READING}
"""


def spec(x: np.ndarray, out: np.ndarray) -> dict[str, np.ndarray]:
    return {"out": round_nearest_even(x)}


def _from_bits(bits) -> np.ndarray:
    return bits_float(np.asarray(bits, dtype=np.uint64).astype(np.uint32))


def _case(name: str, x: np.ndarray, note: str) -> Case:
    x = np.ascontiguousarray(x, dtype=np.float32)
    n = x.size
    out = np.full(n, SENTINEL, dtype=np.uint16)
    step = LaunchStep("bf16_round_kernel", grid=(n + TPB - 1) // TPB, block=TPB, args=("x", "out"),
                      shared_mem=SHARED_BYTES)
    return Case(name, {"x": x, "out": out}, (step,), note)


WORKED = [3.1415927, -0.1, 1.00390625, 1.01171875, 3.4028235e38]

EDGE_BITS = [
    0x00000000, 0x80000000,                  # +0, -0
    0x00000001, 0x00008000, 0x00018000,      # subnormals: rounds to 0, tie to even 0, tie to odd -> 2
    0x007FFFFF, 0x807FFFFF,                  # largest subnormals round to the smallest normals
    0x7F7F7FFF, 0x7F7F8000, 0xFF7F8000,      # just below overflow; ties next to infinity round to inf
    0x7F800000, 0xFF800000,                  # infinities stay
    0x7F800001, 0x7FC00000, 0x7FFFFFFF,      # NaNs: signalling, quiet, all payload bits set
    0xFF800001, 0xFFFFFFFF, 0x7F807FFF,      # negative NaNs, and one that rounds to inf if taken for a number
]


def _ties(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values exactly halfway between two bf16 numbers, half with an odd kept half and half even."""
    kept = rng.integers(0x0080, 0x7F7F, n) | (rng.integers(0, 2, n) << 15)     # finite, both signs
    return _from_bits((kept << 16) | 0x8000)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = np.random.default_rng(56) if rng is None else rng
    n_random = int(rng.integers(900, 1200))
    every_pattern = rng.integers(0, 2**32, n_random, dtype=np.uint64)      # every kind of float32, NaNs too
    near_halfway = (rng.integers(0x0080, 0x7F7F, 512) << 16) | rng.integers(0x7FF8, 0x8009, 512)
    return (
        _case("worked example n=5", WORKED, "the table of the description"),
        _case(f"random bit patterns n={n_random}", _from_bits(every_pattern),
              "any 32 bits: normals, subnormals, infinities and a few NaNs with random payloads"),
        _case("ties n=384", _ties(rng, 384),
              "every value exactly halfway: truncation and round-half-up each get half of them wrong"),
        _case("near halfway n=512", _from_bits(near_halfway),
              "dropped halves 0x7FF8..0x8008: one step either side of the tie must go the right way"),
        _case("edge values n=18", _from_bits(EDGE_BITS),
              "zeros, subnormals, overflow to infinity, infinities and NaNs that naive rounding turns "
              "into infinity or minus zero"),
        _case("gaussian n=300", rng.normal(0, 3, 300), "ordinary weights: 300 is not a multiple of 128"),
        _case("n=1", [-2.0 ** -130], "one element: a negative subnormal"),
    )


def bench(n: int) -> Case:
    rng = np.random.default_rng(56)
    return _case(f"bench n={n}", rng.normal(0, 1, n).astype(np.float32), "graduate-mode timing")


PUZZLE = Puzzle(
    slug="bf16-round",
    number=56,
    title="bf16: round to nearest even",
    chapter=9,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("bf16_round_kernel",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_reads_per_thread(1, "x"),
        max_global_writes_per_thread(1, "out"),
        no_atomics(),
    ),
    stars=(
        Star(2, "coalesced: a warp reads 128 neighbouring bytes of x and writes 64 of out",
             (ideal_coalescing(),)),
    ),
    hints=(
        "Get the bits first: store `x[i]` into the float32 view, `cuda.threadfence_block()`, read the "
        "uint32 view at the same index. Check NaN on the bits: `(u & 0x7FFFFFFF) > 0x7F800000`.",
        "For everything else add a bias below the cut and shift: `0x7FFF` rounds every dropped half above "
        "0x8000 up and every one below down; adding the kept half's lowest bit `(u >> 16) & 1` as well "
        "makes exactly 0x8000 go up only when the kept half is odd.",
        "`@cuda.jit(device=True) def round_bits(u): if (u & 0x7FFFFFFF) > 0x7F800000: return 0x7FC0` "
        "then `return (u + 0x7FFF + ((u >> 16) & 1)) >> 16`; the kernel stores it: "
        "`out[i] = round_bits(as_bits[t])`.",
    ),
    reading=READING,
    bench=bench,
)
