"""Helpers for the puzzle framework's tests: a tiny puzzle, its files, and a scripted stand-in for gpusim.

* ``TINY`` is a one-kernel puzzle (``out = a + 1``) with a constraint and two star tiers; ``STARTER`` and
  ``REFERENCE`` are its files (real numba-cuda), ``FAKE_OK`` a plain-NumPy solution for ``FakeEngine``.
* ``FakeEngine`` replaces ``gpusim.launch``: it calls the kernel once, as plain Python, and reports the counts
  and faults a test asks for. It tests the checker's judging, not gpusim.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.observe.events import ArrayInfo, LaunchInfo
from gpusim.report import LaunchReport
from puzzles.model import Case, LaunchStep, Puzzle, Star
from puzzles.rules import ideal_coalescing, max_global_reads_per_thread, no_bank_conflicts

ENGINE = hasattr(gpusim, "launch")
needs_engine = pytest.mark.skipif(not ENGINE, reason="gpusim.launch is not available yet")


def write(folder: Path, name: str, source: str) -> Path:
    """Write ``source`` (dedented) to ``folder/name`` and return the path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return path


def _spec(out, a, n):
    return {"out": a + np.float32(1)}


def _cases(rng: np.random.Generator | None = None) -> tuple[Case, ...]:
    def case(name, n, note=""):
        a = np.arange(n, dtype=np.float32) * 0.5
        step = LaunchStep("add_one", grid=1, block=n, args=("out", "a", "n"))
        return Case(name, {"out": np.full(n, np.nan, np.float32), "a": a, "n": n}, (step,), note)

    return (case("n=4", 4), case("n=8", 8, "two warps' worth, almost"), case("n=3", 3))


TINY = Puzzle(
    slug="tiny-add", number=901, title="Tiny add", chapter=1, difficulty=1,
    description="Add one to every element: `out[i] = a[i] + 1`.",
    kernels=("add_one",), spec=_spec, make_cases=_cases, outputs=("out",),
    constraints=(max_global_reads_per_thread(1, "a"),),
    stars=(Star(2, "coalesced", (ideal_coalescing(),)), Star(3, "no bank conflicts", (no_bank_conflicts(),))),
    hints=("Each thread handles one element.", "Use cuda.threadIdx.x as the index."),
)

STARTER = '''
    from numba import cuda


    @cuda.jit
    def add_one(out, a, n):
        i = cuda.threadIdx.x
        # FILL ME IN
'''

REFERENCE = '''
    from numba import cuda


    @cuda.jit
    def add_one(out, a, n):
        i = cuda.threadIdx.x
        if i < n:
            out[i] = a[i] + 1
'''

# For the fake engine, which calls a kernel once: the same job as plain NumPy on whole arrays.
FAKE_OK = '''
    from numba import cuda


    @cuda.jit
    def add_one(out, a, n):
        out[:n] = a[:n] + 1
'''


class FakeCounts:
    """Stands in for ``gpusim.metrics.AccessCounts``: every thread reads and writes equally often."""

    def __init__(self, num_threads: int, reads: dict[str, int], writes: dict[str, int], totals: dict,
                 ideal: dict):
        self.num_threads, self.reads, self.writes = num_threads, reads, writes
        self.totals, self.ideal_sectors = totals, ideal

    def reads_per_thread(self, space="global", array=None):
        n = self.reads.get(array, 0) if array else sum(self.reads.values())
        return np.full(self.num_threads, n, np.int64)

    def writes_per_thread(self, space="global", array=None):
        n = self.writes.get(array, 0) if array else sum(self.writes.values())
        return np.full(self.num_threads, n, np.int64)


class FakeEngine:
    """A scripted ``gpusim.launch``: calls ``kernel(*args)`` once and reports what the test configured."""

    def __init__(self):
        self.reads = {"a": 1}
        self.writes = {"out": 1}
        self.sectors = (1, 1)          # (load, store) sectors moved per launch
        self.ideal = (1, 1)
        self.bank_conflicts = 0
        self.with_counts = True
        self.faults: list = []
        self.error: BaseException | None = None
        self.calls: list[tuple] = []

    def __call__(self, kernel, grid, block, args, shared_mem=0, **options):
        self.calls.append((kernel, grid, block, args, shared_mem, options))
        if self.error is not None:
            raise self.error
        getattr(kernel, "py_func", kernel)(*args)
        grid3 = _xyz(grid)
        block3 = _xyz(block)
        info = LaunchInfo(kernel.__name__, "<fake>", grid3, block3, shared_mem)
        arrays = [ArrayInfo(i, name, "global", np.dtype(np.float32), (4,), 256 * i)
                  for i, name in enumerate(sorted(set(self.reads) | set(self.writes)))]
        report = LaunchReport(launch=info, faults=list(self.faults), arrays=arrays)
        report.metrics = {
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": float(self.sectors[0]),
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": float(self.sectors[1]),
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": float(self.bank_conflicts),
        }
        if self.with_counts:
            report.counts = FakeCounts(info.num_threads, self.reads, self.writes, {"global_ld": 1},
                                       {"ld": self.ideal[0], "st": self.ideal[1]})
        return report


def _xyz(d) -> tuple[int, int, int]:
    d = (d,) if isinstance(d, int) else tuple(d)
    return tuple(d) + (1,) * (3 - len(d))


def real_puzzles() -> list[Puzzle]:
    """The game's puzzles for parametrising, without raising on a broken module (test_registry reports it)."""
    from puzzles.registry import discover

    return discover()[0]


def puzzle_id(puzzle: Puzzle) -> str:
    return f"{puzzle.number:02d}-{puzzle.slug}"
