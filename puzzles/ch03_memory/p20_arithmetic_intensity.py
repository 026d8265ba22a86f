"""Puzzle 20 — Arithmetic intensity: the same 8 bytes per element, K multiply-adds, and the roofline."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Rule, RunStats, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread

TPB = 128
K_MAX = 256                      # the most steps any case asks for
A = np.float32(127 / 128)        # y <- A*y + B pulls every value towards B / (1 - A) = 32
B = np.float32(0.25)

READING = ("*Making Deep Learning Go Brrrr From First Principles* — Horace He: the sections on compute, "
           "memory bandwidth and the roofline")

DESCRIPTION = f"""\
# Puzzle 20 — Arithmetic intensity

For every element, start from `v = x[i]` and apply `v = a * v + b` **k times**; store the result in `y[i]`.
`a`, `b` (float32) and `k` are kernel arguments.

**Example** with `a = 0.5`, `b = 1`, `k = 3`, `x = [4, 0]`: `4 -> 3 -> 2.5 -> 2.25` and
`0 -> 1 -> 1.5 -> 1.75`, so `y = [2.25, 1.75]`. (The cases use `a = 127/128`, `b = 0.25`.)

Whatever `k` is, each element costs 8 bytes of DRAM traffic: 4 read, 4 written. The work is `2k`
floating-point operations (a multiply and an add per step — one fused multiply-add on the GPU). Their
ratio is the kernel's **arithmetic intensity**: `2k / 8 = k / 4` FLOPs per byte. The **roofline** says
how fast a kernel can possibly go: time >= max(bytes / bandwidth, FLOPs / peak FLOP rate). With the
datasheet numbers of an H100 SXM (67 TFLOP/s fp32, 3.35 TB/s) the two are equal at 20 FLOP/byte, `k = 80`:

```
 FLOP/s  ^                      ______________  peak fp32 FMA rate (H100 SXM ~67 TFLOP/s)
         |                    /
         |                  /   compute-bound: more k = more time
         |                /
         |              /  <- ridge: 67 TFLOP/s / 3.35 TB/s = 20 FLOP/byte, k ~ 80
         |            /
         |   memory-bound: more k is free
         +------------------------------------------> FLOP per byte (k / 4)
```

Below the ridge the GPU waits on memory and the extra multiply-adds hide in its shadow; above it, time
grows with `k`. Measured on an H200 with 2^26 elements (this puzzle's reference kernel):

```
k            0     1     8     16     64    256    1024
time (µs)  365   361   361    494   1325   4705   18051
                 memory-bound  |  compute-bound: time ~ k
```

Two honest details. The flat part sits at 1.5 TB/s, not the 4.8 TB/s of the datasheet: one float per
thread keeps few bytes in flight. And the slope tops out at 7.6 TFLOP/s, not 67: each step waits for the
one before, and the loop's own counter, compare and branch most likely take issue slots from the FMAs. So
the knee comes early (k ~ 10): the roofs that matter are the ones *your kernel* can reach.

The checker counts the FLOPs your kernel executes, and `report.estimate(gpu)` places a launch on the
roofline of a named GPU. All of this assumes the bytes stay at 8 per element: `v` lives in a register.
A loop that does `y[i] = a * y[i] + b` asks for a load and a store at every step — the simulator counts
`8k` bytes per element. (On the H200 that loop ran as fast as the register version: the compiler kept
`y[i]` in a register for us. It cannot when another array is written in the same loop and might overlap
`y`, so write what you mean.)

**What's new:** arithmetic intensity and the roofline: when FLOPs are free and when bytes are.

**Launch:** blocks of {TPB} threads, `ceil(n / {TPB})` blocks, one thread per element. The kernel gets `x`,
`y`, `n`, `a`, `b`, `k`; `k` goes up to {K_MAX}.

**Read more:** {READING}
"""


def spec(x: np.ndarray, y: np.ndarray, n: int, a: np.float32, b: np.float32, k: int) -> dict[str, np.ndarray]:
    v = x.astype(np.float32).copy()
    for _ in range(k):
        v = np.float32(a) * v + np.float32(b)
    return {"y": v}


def _case(name: str, x, k: int, note: str, a=A, b=B) -> Case:
    x = np.asarray(x, dtype=np.float32)
    n = x.size
    buffers = {"x": x, "y": np.full(n, np.nan, np.float32), "n": n, "a": np.float32(a), "b": np.float32(b),
               "k": k}
    step = LaunchStep("iterate", grid=(n + TPB - 1) // TPB, block=TPB, args=("x", "y", "n", "a", "b", "k"))
    return Case(name, buffers, (step,), note)


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 20)
    n = size(rng, 257, 2047, not_multiple_of=TPB)
    return (
        _case("worked example k=3", [4, 0], 3, "the example from the description (a = 0.5, b = 1)",
              a=0.5, b=1.0),
        _case("k=0, n=100", rng.uniform(-4, 4, 100), 0, "no steps at all: y is a copy of x"),
        _case("k=1, n=1", [-3.0], 1, "one element, one step"),
        _case(f"k=8, n={n}", rng.uniform(-4, 4, n), 8, "n not a multiple of the block"),
        _case("k=64, n=500", rng.uniform(-4, 4, 500), 64, "one step too many or too few shows"),
        _case(f"k={K_MAX}, n=2048", rng.uniform(-4, 4, 2048), K_MAX,
              "the FLOP count is judged here: 16 full blocks, 2 * 256 FLOPs per element"),
    )


def flops_per_step(limit: int = 2) -> Rule:
    """FLOPs <= limit * K_MAX per element; elements are bounded by the ideal store sectors (8 floats each)."""

    def check(s: RunStats) -> str | None:
        elements = 8 * s.ideal_store_sectors
        if s.flops > limit * K_MAX * elements:
            return (f"{s.flops} FLOPs for at most {elements} elements is more than {limit} per step at "
                    f"k = {K_MAX}: one multiply and one add per step is all it takes")
        return None

    return Rule(f"at most {limit} FLOPs per element per step", check)


PUZZLE = Puzzle(
    slug="arithmetic-intensity",
    number=20,
    title="Arithmetic intensity",
    chapter=3,
    difficulty=2,
    description=DESCRIPTION,
    kernels=("iterate",),
    spec=spec,
    make_cases=make_cases,
    outputs=("y",),
    constraints=(
        max_global_reads_per_thread(K_MAX + 1),
        max_global_writes_per_thread(K_MAX + 1),
    ),
    stars=(
        Star(2, "8 bytes per element: read `x` once, write `y` once, keep `v` in a register",
             (max_global_reads_per_thread(1), max_global_writes_per_thread(1, "y"))),
        Star(3, "coalesced, and no wasted FLOPs: one multiply and one add per step",
             (ideal_coalescing(), flops_per_step())),
    ),
    hints=(
        "One thread per element: `i = cuda.grid(1)`, guarded by `i < n`. Where does `v` live between "
        "steps?",
        "Read `x[i]` into a local variable once, loop `for _ in range(k):` on the variable, store once.",
        "`v = x[i]`; `for _ in range(k): v = a * v + b`; `y[i] = v`.",
    ),
    reading=READING,
    rtol=1e-4,
    atol=1e-4,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n multiply-adds: n / K_MAX elements, K_MAX steps each (the compute-bound end of the puzzle)."""
    x = np.random.default_rng(8020).uniform(-4, 4, max(1, n // K_MAX)).astype(np.float32)
    return _case(f"bench n={x.size} k={K_MAX}", x, K_MAX, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
