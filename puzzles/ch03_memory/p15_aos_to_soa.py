"""Puzzle 15 — AoS to SoA: turn (n, 4) records into a (4, n) array, coalesced on both sides."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Rule, RunStats, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, max_global_writes_per_thread

TPB = 128            # threads per block = records per block; each thread moves 4 floats
PASS = TPB // 4      # records one pass of a block covers when lanes walk `aos` in memory order

READING = ("*GPU Glossary* — Modal: the entries *Memory Coalescing* and *L1 Data Cache* (what a warp's "
           "memory request costs, and when the cache hides the waste)")

DESCRIPTION = f"""\
# Puzzle 15 — AoS to SoA

`aos` holds `n` records of four float32 fields, one record per row: an *array of structs*. Turn it into a
*struct of arrays*: `soa` has one row per field, `soa[f, r] = aos[r, f]` (shape `(4, n)`).

**Example** with `n = 2`: `aos = [[1, 2, 3, 4], [5, 6, 7, 8]]` gives `soa = [[1, 5], [2, 6], [3, 7], [4, 8]]`.

The numbers are easy; this puzzle is about *how the bytes move*. Memory is served in 32-byte **sectors**
(8 floats), and a warp instruction costs as many sectors as its 32 lanes touch. The obvious mapping —
thread `r` copies record `r` — lands like this for the first warp:

```
aos in memory:  x0 y0 z0 w0 | x1 y1 z1 w1 | x2 y2 z2 w2 | ...    (16 bytes per record)

thread r copies record r:   load 1 (field 0)  lane 0: x0   lane 1: x1   lane 2: x2  ...
                            lanes 16 bytes apart -> 16 sectors for 128 useful bytes
                            loads 2, 3, 4 (fields 1-3) touch the same 16 sectors again
                            stores soa[f, r..r+31]: 32 neighbouring floats -> 4 sectors (ideal)
```

Every store is perfect; every load asks for 4 times the sectors it uses. Now let the lanes walk `aos`
in memory order. A block owns {TPB} records = {4 * TPB} floats; in pass `k` (0..3) thread `t` takes float
`k*{TPB} + t` of that slab, which is field `t % 4` of the block's record `k*{PASS} + t // 4`:

```
pass 0, first warp:  lane  0  1  2  3 | 4  5  6  7 | ... | 28 29 30 31
                     reads x0 y0 z0 w0 | x1 y1 z1 w1 | ... | x7 y7 z7 w7    -> 4 sectors, all used
                     writes soa[0, 0..7] (lanes 0,4,..,28), soa[1, 0..7] (lanes 1,5,..,29), ...
                                                                           -> 4 full sectors
```

Both sides are now sector-perfect, and a thread always handles the same field.

**What a real GPU says.** On an H200 (16.7 M records, 256 MiB each way) both kernels took 165-195 µs,
run to run; issuing each store right after its load, instead of all four loads first, cost ~212 µs. The
sector-perfect mapping is no faster *here*: the record-per-thread kernel's four loads come from the same
warp back to back, so loads 2-4 find their sectors in the L1 cache and DRAM still sees every byte once.
The star tiers count sectors — what the memory system is asked for, the number Nsight Compute reports —
because that is what you pay when no cache steps in: in puzzle 16 the strided side makes a kernel 2x
slower. Count first, then measure.

**What's new:** *coalescing* is decided by which thread touches which address, and you choose that
mapping; and caches can hide a mapping's waste when the same warp reuses a sector right away.

**Launch:** blocks of {TPB} threads, `ceil(n / {TPB})` blocks — one thread per record, four floats per
thread. The kernel gets `aos` (shape `(n, 4)`), `soa` (shape `(4, n)`) and `n`; records `>= n` do not exist.
In every case `n` is 1, 2 or a multiple of 8, so no 32-byte piece of a row of `soa` straddles two sectors
and sector-perfect stores are possible.

**Read more:** {READING}
"""


def spec(aos: np.ndarray, soa: np.ndarray, n: int) -> dict[str, np.ndarray]:
    return {"soa": np.ascontiguousarray(aos.T)}


def _case(name: str, aos, note: str) -> Case:
    aos = np.ascontiguousarray(aos, dtype=np.float32)
    n = aos.shape[0]
    buffers = {"aos": aos, "soa": np.full((4, n), np.nan, np.float32), "n": n}
    step = LaunchStep("aos_to_soa", grid=(n + TPB - 1) // TPB, block=TPB, args=("aos", "soa", "n"))
    return Case(name, buffers, (step,), note)


def _records(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random records whose fields sit near 10, 20, 30, 40: a value in the wrong row is easy to spot."""
    return rng.uniform(-1, 1, (n, 4)) + np.array([10, 20, 30, 40])


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 15)
    example = np.arange(1, 9, dtype=np.float32).reshape(2, 4)
    part = size(rng, 97, 127, multiple_of=8)              # whole sectors per row of `soa`: ideal is reachable
    three = size(rng, 257, 383, multiple_of=8, not_multiple_of=TPB)
    return (
        _case("worked example n=2", example, "the example from the description"),
        _case("n=1", [[1.5, -2.25, 3.0, -4.75]], "a single record: one thread has work, 127 do not"),
        _case(f"random n={part}", _records(rng, part), f"one partial block: records {part}..127 do not exist"),
        _case(f"random n={three}", _records(rng, three), f"3 blocks, the last one with {three - 256} records"),
        _case("random n=1024", _records(rng, 1024), "8 full blocks"),
    )


def stores_coalesced() -> Rule:
    """Only the stores: they move no more sectors than a perfectly coalesced kernel would."""

    def check(s: RunStats) -> str | None:
        if s.global_store_sectors > s.ideal_store_sectors:
            return (f"stores move {s.global_store_sectors} sectors where {s.ideal_store_sectors} would do: "
                    "neighbouring lanes should write neighbouring elements of a row of `soa`")
        return None

    return Rule("coalesced stores", check)


PUZZLE = Puzzle(
    slug="aos-to-soa",
    number=15,
    title="AoS to SoA",
    chapter=3,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("aos_to_soa",),
    spec=spec,
    make_cases=make_cases,
    outputs=("soa",),
    constraints=(
        max_global_reads_per_thread(4, "aos"),
        max_global_writes_per_thread(4, "soa"),
    ),
    stars=(
        Star(2, "coalesced stores: every store writes whole sectors of `soa`", (stores_coalesced(),)),
        Star(3, "coalesced loads and stores: every sector a warp touches is fully used",
             (ideal_coalescing(),)),
    ),
    hints=(
        "Start simple: thread r copies record r (four loads, four stores). The checker then shows how many "
        "sectors the loads touch compared with the ideal. Which side wastes them, and why?",
        f"For the loads to be contiguous, lane t of a warp must read the float right after lane t-1's. "
        f"The block owns records `b*{TPB}` .. `b*{TPB}+{TPB - 1}`; in pass k, thread t reads field "
        f"`t % 4` of record `b*{TPB} + k*{TPB // 4} + t // 4`. Then look at which lanes write row 0 of `soa`.",
        "Keep the four values in `cuda.local.array(4, numba.float32)`: one loop of 4 loads (skip records "
        ">= n), then one loop of 4 stores `soa[f, r] = v[k]` with `f = t % 4`. Issuing all loads first "
        "keeps four of them in flight per thread.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n floats: n / 4 records."""
    aos = np.random.default_rng(8015).standard_normal((max(1, n // 4), 4), dtype=np.float32)
    return _case(f"bench {aos.shape[0]} records", aos, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
