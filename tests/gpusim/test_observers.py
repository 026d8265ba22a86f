"""Observers cannot change results: they see read-only arrays, and instrumentation on or off computes the same.

The reference solutions (and the wrong solutions, whose faults must be found either way) are the widest set
of kernels the project has; each is run with ``instrument=True`` and ``instrument=False`` on the same inputs.
"""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import gpusim
from gpusim import Observer

ROOT = Path(__file__).resolve().parents[2]


class Vandal(Observer):
    """Tries to write into every array the engine hands it."""

    def __init__(self) -> None:
        self.seen = 0
        self.shared_seen = 0

    def on_access(self, ev) -> None:
        for arr in (ev.gtid, ev.block, ev.warp, ev.flat, ev.phase):
            assert not arr.flags.writeable
            with pytest.raises(ValueError):
                arr[...] = 0
        self.seen += 1

    def on_barrier(self, blocks, lineno) -> None:
        assert not blocks.flags.writeable
        with pytest.raises(ValueError):
            blocks[...] = 0
        self.seen += 1

    def on_shared_values(self, blocks, local_blocks, views, lineno) -> None:
        for arr in (blocks, local_blocks, *(v for _, v in views)):
            assert not arr.flags.writeable
            with pytest.raises(ValueError):
                arr[...] = 0
        self.shared_seen += 1


@cuda.jit
def exchange(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i]
    cuda.syncthreads()
    out[i] = sh[63 - t]


def test_observers_see_read_only_event_arrays_and_the_kernel_is_unchanged():
    a = np.arange(128, dtype=np.float32)
    out = np.zeros_like(a)
    vandal = Vandal()
    report = gpusim.launch(exchange, 2, 64, (a, out), observers=[vandal])
    assert not report.faults and vandal.seen >= 4 and vandal.shared_seen >= 2
    np.testing.assert_array_equal(out, a.reshape(2, 64)[:, ::-1].reshape(-1))


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"observed_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(mod, puzzle, case, instrument: bool):
    bufs = {k: copy.deepcopy(v) for k, v in case.buffers.items()}
    faults = []
    for step in case.launches:   # a multi-device case's launches in issue order, every array in one memory
        report = gpusim.launch(getattr(mod, step.kernel), step.grid, step.block, step.arg_values(bufs),
                               step.shared_mem, instrument=instrument)
        faults += [(type(f).__name__, f.lineno, f.block, f.thread, f.array, f.index, f.count) for f in report.faults]
        if report.faults:
            break
    return bufs, faults


def _files():
    from puzzles.registry import all_puzzles

    out = []
    for p in all_puzzles():
        out.append((p, ROOT / "solutions" / p.solution_file))
        wrong = sorted((ROOT / "tests" / "puzzles" / "wrong").glob(p.solution_file[:-3] + "__*.py"))
        # those that never launch (a file that fails to load or compile) have nothing to compare, and the
        # cheats attack the judge at import (swapping specs, patching comparisons): not kernels, and loaded
        # here, in the test process, they would change what later tests see
        out += [(p, w) for w in wrong
                if "expect=compile" not in w.read_text().splitlines()[0] and "__cheat_" not in w.name]
    return out


FILES = _files()


@pytest.mark.slow
@pytest.mark.parametrize("puzzle, path", FILES, ids=[path.stem for _, path in FILES])
def test_instrumentation_on_or_off_gives_identical_outputs_and_faults(puzzle, path):
    mod = _load(path)
    for case in puzzle.make_cases():
        with_obs, faults_on = _run(mod, puzzle, case, True)
        without, faults_off = _run(mod, puzzle, case, False)
        assert faults_on == faults_off, case.name
        for name in with_obs:
            x, y = np.asarray(with_obs[name]), np.asarray(without[name])
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), (case.name, name)
