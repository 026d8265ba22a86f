"""Every puzzle's benchmark launch (``bench(n)`` or ``bench_max()``, appended to each puzzle module).

What graduate mode relies on: every puzzle declares one; the case is deterministic (a CPU job rebuilds it
to check the GPU's outputs); it is a valid case that the reference solution passes, judged as the checker
judges (gpusim, the spec, the puzzle's tolerances); and n means elements of work.
"""

from __future__ import annotations

import copy
import hashlib

import numpy as np
import pytest

import gpusim
from puzzles import registry, workspace
from puzzles.compare import first_mismatch
from puzzles.graduate.estimates import ESTIMATE_MAX_STEPS as BENCH_MAX_STEPS  # a benchmark case is large on purpose
from puzzles.loader import load_solution
from puzzles.multidevice import case_outputs

PUZZLES = registry.all_puzzles()
N = 4096


def _case(p, n=N):
    return p.bench(n) if p.bench is not None else p.bench_max()


def _digest(case) -> str:
    h = hashlib.sha256()
    for name, v in sorted(case.buffers.items()):
        h.update(name.encode())
        h.update(np.ascontiguousarray(v).tobytes() if isinstance(v, np.ndarray) else repr(v).encode())
    return h.hexdigest()


def test_every_puzzle_declares_a_benchmark_launch():
    for p in PUZZLES:
        assert (p.bench is not None) != (p.bench_max is not None), p.slug
        assert p.bench is not None or p.bench_note, f"{p.slug}: a fixed launch says why (bench_note)"


@pytest.mark.parametrize("puzzle", PUZZLES, ids=[p.slug for p in PUZZLES])
def test_the_reference_passes_the_benchmark_case_and_the_case_is_deterministic(puzzle):
    case = _case(puzzle)
    assert _digest(case) == _digest(_case(puzzle))
    sol = load_solution(workspace.reference_path(puzzle), puzzle.kernels)
    bufs = copy.deepcopy(dict(case.buffers))
    for step in case.launches:
        report = gpusim.launch(sol.kernels[step.kernel], step.grid, step.block, step.arg_values(bufs),
                               step.shared_mem, trace=False, instrument=False, max_steps=BENCH_MAX_STEPS)
        assert not report.faults, [str(f) for f in report.faults]
    want = puzzle.spec(**copy.deepcopy(dict(case.buffers)))
    mismatch = first_mismatch(case_outputs(puzzle, case), bufs, want, case.buffers, puzzle.rtol, puzzle.atol)
    assert mismatch is None, mismatch.message


@pytest.mark.parametrize("slug, work", [
    ("blocks", lambda b: b["a"].size),
    ("transpose-tiled", lambda b: b["a"].size),
    ("aos-to-soa", lambda b: b["aos"].size),
    ("matmul", lambda b: b["a"].shape[0] * b["a"].shape[1] * b["b"].shape[1]),           # multiply-adds
    ("attention", lambda b: b["q"].shape[0] * b["k"].shape[0] * b["q"].shape[1]),
    ("arithmetic-intensity", lambda b: b["x"].size * b["k"]),                             # steps
])
def test_n_is_elements_of_work(slug, work):
    p = registry.get(slug)
    n = 1 << 18
    assert 0.9 * n <= work(p.bench(n).buffers) <= n
