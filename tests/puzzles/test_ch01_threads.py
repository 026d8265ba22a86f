"""Chapter 1 (threads and blocks): the specs agree with the worked examples their descriptions show, and the
test cases contain the edge cases the puzzles promise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from puzzles.ch01_threads import (
    p01_map,
    p02_zip,
    p03_guard,
    p04_map_2d,
    p05_broadcast,
    p06_blocks,
    p07_blocks_2d,
)

MODULES = (p01_map, p02_zip, p03_guard, p04_map_2d, p05_broadcast, p06_blocks, p07_blocks_2d)
F32 = np.float32


def _dims(d) -> tuple[int, ...]:
    return (d,) if isinstance(d, int) else tuple(d)


def _threads(grid, block) -> tuple[int, ...]:
    """Threads along x, y of a launch."""
    g, b = _dims(grid) + (1,), _dims(block) + (1,)
    return g[0] * b[0], g[1] * b[1]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_cases_are_well_formed(module):
    puzzle = module.PUZZLE
    cases = puzzle.make_cases()
    assert len(cases) >= 4
    assert len({c.name for c in cases}) == len(cases)
    for case in cases:
        out = case.buffers["out"]
        assert out.dtype == F32 and np.isnan(out).all(), f"{case.name}: `out` must start as NaN"
        for step in case.steps:
            assert step.kernel in puzzle.kernels
            assert all(arg in case.buffers for arg in step.args)
            tx, ty = _threads(step.grid, step.block)
            rows, cols = (1, out.shape[0]) if out.ndim == 1 else out.shape
            assert tx >= cols and ty >= rows, f"{case.name}: the launch does not cover `out`"
        expected = puzzle.spec(**case.buffers)["out"]
        assert expected.shape == out.shape and np.isfinite(expected).all()
    assert any(c.buffers["out"].size == 1 for c in cases), "every chapter-1 puzzle has a one-element case"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_description_names_the_reading_and_whats_new(module):
    puzzle = module.PUZZLE
    assert puzzle.reading and puzzle.reading in puzzle.description
    assert "**What's new:**" in puzzle.description and "**Launch:**" in puzzle.description
    assert 2 <= len(puzzle.hints) <= 3


def test_map_worked_example():
    a = np.array([3, -1, 0.5, 7], F32)
    out = p01_map.spec(out=np.empty_like(a), a=a)["out"]
    np.testing.assert_array_equal(out, [13, 9, 10.5, 17])
    assert "`out = [13, 9, 10.5, 17]`" in p01_map.DESCRIPTION
    # one block that covers the array exactly, with sizes that are and are not a multiple of a warp
    steps = [c.steps[0] for c in p01_map.make_cases()]
    assert all(s.grid == 1 for s in steps)
    assert any(s.block % 32 for s in steps) and any(s.block % 32 == 0 for s in steps)


def test_zip_worked_example_and_distinct_inputs():
    a, b = np.array([1, 2, 3], F32), np.array([10, -20, 0.5], F32)
    np.testing.assert_array_equal(p02_zip.spec(out=a, a=a, b=b)["out"], [11, -18, 3.5])
    for case in p02_zip.make_cases():   # a + a or b + b must never pass
        a, b = case.buffers["a"], case.buffers["b"]
        assert not np.allclose(a, b)


def test_guard_has_more_threads_than_elements():
    cases = p03_guard.make_cases()
    np.testing.assert_array_equal(
        p03_guard.spec(out=None, a=np.array([5, -3, 2], F32), n=3)["out"], [15, 7, 12])
    idle = [c.steps[0].block - c.buffers["n"] for c in cases]
    assert all(i >= 0 for i in idle) and sum(i > 0 for i in idle) >= 3
    assert any(i == 0 for i in idle), "one case where the guard never fires"


def test_map_2d_worked_example_and_guard_cases():
    a = np.arange(1, 10, dtype=F32).reshape(3, 3)
    np.testing.assert_array_equal(p04_map_2d.spec(out=a, a=a, n=3)["out"], a + 10)
    for case in p04_map_2d.make_cases():
        bx, by = case.steps[0].block
        assert bx == by >= case.buffers["n"]
        a = case.buffers["a"]
        if a.shape[0] > 1:
            assert not np.allclose(a, a.T), f"{case.name}: a symmetric matrix hides a[c, r] mix-ups"


def test_broadcast_worked_example_and_non_square_cases():
    a, b = np.array([0, 10, 20], F32), np.array([1, 2, 3, 4], F32)
    out = p05_broadcast.spec(out=None, a=a, b=b, rows=3, cols=4)["out"]
    np.testing.assert_array_equal(out, [[1, 2, 3, 4], [11, 12, 13, 14], [21, 22, 23, 24]])
    cases = p05_broadcast.make_cases()
    assert sum(c.buffers["rows"] != c.buffers["cols"] for c in cases) >= 4
    assert any(c.steps[0].block[0] != c.steps[0].block[1] for c in cases), "a block that is not square"


def test_blocks_index_example():
    # "Thread 1 of block 2 handles element 2 * 4 + 1 = 9" with blocks of 4 over n = 10
    case = next(c for c in p06_blocks.make_cases() if c.name.startswith("worked example"))
    assert (case.steps[0].grid, case.steps[0].block, case.buffers["n"]) == (3, 4, 10)
    cases = p06_blocks.make_cases()
    assert len({c.steps[0].block for c in cases}) >= 3, "block sizes vary, so none can be hard-coded"
    assert all(c.steps[0].grid == math.ceil(c.buffers["n"] / c.steps[0].block) for c in cases)
    assert any(c.buffers["n"] % c.steps[0].block for c in cases)
    assert any(c.steps[0].grid > 1 and c.buffers["n"] % c.steps[0].block == 1 for c in cases)


def test_blocks_2d_cases_fit_neither_way():
    cases = p07_blocks_2d.make_cases()
    ragged = [c for c in cases
              if c.buffers["cols"] % c.steps[0].block[0] and c.buffers["rows"] % c.steps[0].block[1]
              and min(c.steps[0].grid) > 1]
    assert len(ragged) >= 3, "several grids of several blocks each way, ragged in both dimensions"
    for c in cases:
        assert c.steps[0].grid == (math.ceil(c.buffers["cols"] / c.steps[0].block[0]),
                                   math.ceil(c.buffers["rows"] / c.steps[0].block[1]))
    # the description's thread (x=2, y=0) of block (1, 1) with 4x4 blocks owns out[4, 6] of the 5x7 matrix
    bx = by = 4
    assert (1 * by + 0, 1 * bx + 2) == (4, 6)
    assert "out[4, 6] = a[4, 6] + 10" in p07_blocks_2d.DESCRIPTION
    worked = cases[0]
    assert worked.buffers["a"].shape == (5, 7) and worked.steps[0].block == (4, 4)
    assert worked.steps[0].grid == (2, 2)


TRANSPOSED_MAP_2D = '''
from numba import cuda


@cuda.jit
def map_2d_kernel(out, a, n):
    r = cuda.threadIdx.x
    c = cuda.threadIdx.y
    if r < n and c < n:
        out[r, c] = a[r, c] + 10
'''


def test_map_2d_transposed_mapping_is_correct_but_loses_the_coalescing_star(tmp_path):
    """x for the row gives the right numbers (the matrix and block are square) but scatters each warp."""
    from puzzles.checker import check_file

    path = tmp_path / "transposed.py"
    path.write_text(TRANSPOSED_MAP_2D.lstrip(), encoding="utf-8")
    result = check_file(p04_map_2d.PUZZLE, path)
    assert result.passed and result.stars == 1, (result.stars, result.next_star, result.failures)
    assert "coalesced" in result.next_star
