"""Puzzle 27 — Row argmax: the index of each row's maximum, ties to the lowest index (greedy decoding)."""

from __future__ import annotations

import numpy as np

from puzzles.casegen import generator, size
from puzzles.model import Case, LaunchStep, Puzzle, Rule, RunStats, Star
from puzzles.rules import ideal_coalescing, max_global_writes_per_thread, no_shared

TPB = 128                      # 4 warps = 4 rows per block
ROWS_PER_BLOCK = TPB // 32
COLS_MAX = 1000
PER_LANE = -(-COLS_MAX // 32)  # 32: the most elements one lane reads when a row is split over its warp
SENTINEL = -1

READING = ("*Assisted Generation* — Hugging Face: greedy decoding takes the argmax of the logits at every "
           "step, and a draft model can propose several steps at once")

DESCRIPTION = f"""\
# Puzzle 27 — Row argmax

For each row of a `rows x cols` float32 matrix, find the column of its largest value:
`out[r] = argmax(a[r, :])`. When the largest value occurs more than once, the **lowest** column wins
(as `numpy.argmax` and `torch.argmax` do). Rows may hold `-inf` (masked positions); a row of only `-inf`
answers 0.

This is greedy decoding: `a` holds one row of logits per sequence, and the next token is the argmax.
Vocabularies have tens of thousands of columns, so a row is split over a warp.

**Example.**

```
a = [[ 2, 7, -1, 7],      out = [1,     row 0: 7 at columns 1 and 3 -> the lower one, 1
     [-5, -3, -3, -8],           1,     row 1: all negative; -3 at 1 and 2 -> 1
     [ 4, 4, 4, 4]]              0]     row 2: all equal -> 0
```

Each lane scans columns `lane, lane + 32, lane + 64, ...` keeping its best `(value, column)`: scanning
upwards with a strict `>` keeps the first of equal values. Then the warp combines pairs with shuffles —
shuffle the value *and* the column — and the rule for combining two candidates must break ties itself:

```
take the other candidate if  other_value > my_value
                         or (other_value == my_value and other_column < my_column)
```

Without the second line the answer depends on which lane happened to hold which copy of the maximum:
lane 8 may hold the max at column 40 while lane 3 holds an equal one at column 3. A lane with no column
at all (a row shorter than 32) must never win: give it `-inf` and a column past the end.

**What's new:** a reduction over *pairs*, and making a parallel result deterministic: the answer may
not depend on the order in which lanes meet.

**Launch:** blocks of {TPB} threads, `ceil(rows / {ROWS_PER_BLOCK})` blocks: warp `w` of the grid handles row
`w`. `out` is int32 (starts at {SENTINEL}). `cols` is at most {COLS_MAX}.

**Read more:** {READING}
"""


def spec(a: np.ndarray, out: np.ndarray, rows: int, cols: int) -> dict[str, np.ndarray]:
    return {"out": np.argmax(a, axis=1).astype(np.int32)}


def _case(name: str, a, note: str) -> Case:
    a = np.ascontiguousarray(a, dtype=np.float32)
    rows, cols = a.shape
    step = LaunchStep("row_argmax", grid=-(-rows // ROWS_PER_BLOCK), block=TPB,
                      args=("a", "out", "rows", "cols"))
    return Case(name, {"a": a, "out": np.full(rows, SENTINEL, np.int32), "rows": rows, "cols": cols},
                (step,), note)


def _ties(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    """Small integers (-4..4), so most rows have their maximum several times."""
    return rng.integers(-4, 5, (rows, cols)).astype(np.float32)


def _cross_lane_ties(cols: int) -> np.ndarray:
    """Rows whose maximum appears in a low column held by a low lane and in higher columns held by lower
    lanes, so a combine step that ignores the column picks the wrong copy."""
    a = np.zeros((4, cols), np.float32)
    a[0, [40, 3]] = 9             # lane 8 holds column 40, lane 3 column 3: answer 3
    a[1, [33, 64, 2]] = 5         # lanes 1, 0, 2: answer 2
    a[2, [cols - 1, 31 + 32]] = 7  # two copies late in the row
    a[3, [95, 62, 61]] = 1        # lanes 31, 30, 29: answer 61
    return a


def _edges(rng: np.random.Generator, cols: int) -> np.ndarray:
    """Distinct values with each row's one maximum at column 32, 64, cols - 1 or 31: the first column a
    lane's loop reaches, the second, the row's last, and the last a lane reads before its loop."""
    a = rng.permutation(4 * cols).reshape(4, cols).astype(np.float32) - 2 * cols
    for r, c in enumerate((32, 64, cols - 1, 31)):
        a[r, c] = 3 * cols
    return a


def make_cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    rng = generator(rng, 27)
    masked = rng.standard_normal((5, 70)).astype(np.float32)
    masked[:, ::3] = -np.inf
    masked[4, :] = -np.inf
    negative = -rng.uniform(1, 100, (6, 33)).astype(np.float32)
    negative[2, [0, 32]] = -0.5          # a tie inside lane 0: columns 0 and 32 (answer 0)
    tie_rows, tie_cols = size(rng, 5, 12), size(rng, 257, 319)
    return (
        _case("worked example 3x4", [[2, 7, -1, 7], [-5, -3, -3, -8], [4, 4, 4, 4]],
              "the example from the description"),
        _case("1x1", [[-7.5]], "one element"),
        _case("ties across lanes 4x100", _cross_lane_ties(100),
              "each row's maximum appears in several lanes; the lowest column must win"),
        _case("all negative 6x33", negative, "a best value that starts at 0 would be wrong here"),
        _case("masked logits 5x70", masked, "every third column is -inf; the last row is all -inf (answer 0)"),
        _case(f"ties {tie_rows}x{tie_cols}", _ties(rng, tie_rows, tie_cols),
              "values -4..4: the max occurs many times in most rows"),
        _case("maximum at a lane's edge 4x97", _edges(rng, 97),
              "each row's maximum at column 32, 64, 96 (the last) or 31: a loop that starts a column late, "
              "steps 33 or stops before the last column misses it"),
        _case(f"vocabulary 3x{COLS_MAX}", rng.standard_normal((3, COLS_MAX)).round(1),
              f"{COLS_MAX} columns: each lane scans about {COLS_MAX // 32}"),
    )


def spread_rows(limit: int = PER_LANE) -> Rule:
    def check(s: RunStats) -> str | None:
        if s.reads_per_thread_by_array.get("a", 0) > limit:
            return (f"a thread reads `a` {s.reads_per_thread_by_array['a']} times; split each row over its "
                    f"warp's 32 lanes (at most {limit} each for {COLS_MAX} columns)")
        return None

    return Rule(f"each row is split over its warp: at most {limit} reads of `a` per thread", check)




PUZZLE = Puzzle(
    slug="argmax",
    number=27,
    title="Row argmax",
    chapter=5,
    difficulty=3,
    description=DESCRIPTION,
    kernels=("row_argmax",),
    spec=spec,
    make_cases=make_cases,
    outputs=("out",),
    constraints=(
        max_global_writes_per_thread(1, "out"),
    ),
    stars=(
        Star(2, "each row split over its warp, lanes reading neighbouring columns",
             (spread_rows(), ideal_coalescing(slack=1.5))),
        Star(3, "the warp combines its candidates with shuffles: no shared memory", (no_shared('shuffles need none'),)),
    ),
    hints=(
        "`row = cuda.grid(1) // 32`; if `row < rows`, lane `l` loops `j = l, l + 32, ...` below `cols` and "
        "keeps `best` and `idx`, replacing them only when `a[row, j] > best`. Start from `best = -inf`, "
        "`idx = lane` (a lane past the end keeps `idx >= cols`), and take the first column a lane reads "
        "unconditionally, so a row of `-inf` still has an answer.",
        "Combine with five shuffle steps `d = 16, 8, 4, 2, 1`: `ov = cuda.shfl_down_sync(FULL_MASK, best, "
        "d)`, `oi = cuda.shfl_down_sync(FULL_MASK, idx, d)`; take `(ov, oi)` if `ov > best or (ov == best "
        "and oi < idx)`.",
        "Lane 0 ends with the row's answer: `if lane == 0: out[row] = idx`.",
    ),
    reading=READING,
)


# Graduate mode (puzzles/graduate/): this puzzle's launch at benchmark scale. It is kept apart from the
# definitions above and attached to PUZZLE here.
def bench(n: int) -> Case:
    """About n elements: rows of COLS_MAX columns (the widest in the puzzle), one warp per row."""
    cols = min(COLS_MAX, n)
    a = np.random.default_rng(8027).standard_normal((max(1, n // cols), cols), dtype=np.float32)
    return _case(f"bench {a.shape[0]}x{cols}", a, "benchmark size")


PUZZLE = Puzzle(**(vars(PUZZLE) | {"bench": bench}))
