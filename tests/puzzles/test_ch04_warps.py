"""Chapter 4 (warps): the specs agree with the worked examples of the descriptions, the cases hold partial
warps and the values that catch the classic shuffle mistakes, the launches match the files' constants, and
a shared-memory version of each warp algorithm stops one star short."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from puzzles.ch04_warps import p21_warp_reduce, p22_warp_scan, p23_stream_compaction, p24_warp_broadcast

ROOT = Path(__file__).resolve().parents[2]
MODULES = (p21_warp_reduce, p22_warp_scan, p23_stream_compaction, p24_warp_broadcast)
F32 = np.float32


def _tpb(path: Path) -> int | None:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "TPB":
            return ast.literal_eval(node.value)
    return None


def _sentinel_filled(array: np.ndarray) -> bool:
    return bool(np.isnan(array).all()) if array.dtype.kind == "f" else bool((array == array.flat[0]).all()
                                                                             and array.flat[0] < 0)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_cases_are_well_formed(module):
    puzzle = module.PUZZLE
    cases = puzzle.make_cases()
    assert len(cases) >= 5 and len({c.name for c in cases}) == len(cases)
    for case in cases:
        n = case.buffers["n"]
        for name in puzzle.outputs:
            assert _sentinel_filled(case.buffers[name]), f"{case.name}: `{name}` must start at a sentinel"
        expected = puzzle.spec(**case.buffers)
        for name in puzzle.outputs:
            assert expected[name].shape == case.buffers[name].shape
        step = case.steps[0]
        assert step.block == module.TPB and step.grid * module.TPB >= n
    sizes = [c.buffers["n"] for c in cases]
    assert any(n % 32 for n in sizes if n > 32), "a partial warp after a full one"
    assert any(n == 1 for n in sizes)
    assert "cuda.shfl" in puzzle.description or "ballot_sync" in puzzle.description
    assert puzzle.reading in puzzle.description and "**What's new:**" in puzzle.description
    assert "no shared memory" in " ".join(r.description for s in puzzle.stars for r in s.rules)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_starter_and_reference_agree_with_the_launch(module):
    puzzle = module.PUZZLE
    assert _tpb(ROOT / "solutions" / puzzle.solution_file) == module.TPB
    assert _tpb(ROOT / "puzzles" / "starters" / puzzle.starter_file) == module.TPB


def test_warp_reduce_example_and_partial_warps():
    a = np.array([3, 1, -2, 5, 0, 4, -1, 2], F32)
    np.testing.assert_array_equal(p21_warp_reduce.spec(a=a, out=None, n=8)["out"], [12])
    assert "d=1: `12`" in p21_warp_reduce.DESCRIPTION
    a = np.arange(1, 46, dtype=F32)                 # one full warp, one of 13
    np.testing.assert_array_equal(p21_warp_reduce.spec(a=a, out=None, n=45)["out"],
                                  [a[:32].sum(), a[32:].sum()])
    for case in p21_warp_reduce.make_cases()[1:]:   # exact sums: integers, no zeros
        v = case.buffers["a"]
        assert (v == np.round(v)).all() and (v != 0).all() and np.abs(v).sum() < 2 ** 24


def test_warp_scan_example_restarts_per_warp():
    a = np.array([3, 1, -2, 5, 0, 4, -1, 2], np.int32)
    out = p22_warp_scan.spec(a=a, out=None, n=8)["out"]
    np.testing.assert_array_equal(out, [3, 4, 2, 7, 7, 11, 10, 12])
    assert "`out = [3, 4, 2, 7, 7, 11, 10, 12]`" in p22_warp_scan.DESCRIPTION
    ones = p22_warp_scan.spec(a=np.ones(64, np.int32), out=None, n=64)["out"]
    np.testing.assert_array_equal(ones, np.tile(np.arange(1, 33), 2))
    names = [c.name for c in p22_warp_scan.make_cases()]
    assert any("powers of two" in n for n in names)


def test_stream_compaction_example_zero_and_empty_warps():
    a = np.array([5, -2, 0, 7, -1, 3, 9, -4], np.int32)
    sentinel = p23_stream_compaction.SENTINEL
    got = p23_stream_compaction.spec(a=a, out=None, count=None, n=8)
    np.testing.assert_array_equal(got["out"], [5, 7, 3, 9] + [sentinel] * 4)
    np.testing.assert_array_equal(got["count"], [4])
    assert "count[0] = popc(ballot) = 4" in p23_stream_compaction.DESCRIPTION
    cases = p23_stream_compaction.make_cases()
    counts = np.concatenate([p23_stream_compaction.spec(**c.buffers)["count"] for c in cases])
    assert 0 in counts and 32 in counts, "a warp that keeps nothing and one that keeps everything"
    values = np.concatenate([c.buffers["a"] for c in cases])
    assert (values == 0).any(), "zeros must appear: they are not positive"
    assert sentinel < 0 and not (values == sentinel).any()


def test_warp_broadcast_example_and_negative_partial_warp():
    a = np.array([3.5, -1, 7.25, 9], F32)
    np.testing.assert_array_equal(p24_warp_broadcast.spec(a=a, out=None, n=4)["out"], [-5.5, -10, -1.75, 0])
    assert "`out = [-5.5, -10, -1.75, 0]`" in p24_warp_broadcast.DESCRIPTION
    cases = p24_warp_broadcast.make_cases()
    assert any(c.buffers["n"] % 32 and (c.buffers["a"] < 0).all() for c in cases), \
        "an all-negative partial warp catches padding with 0"
    two = next(c for c in cases if c.name.startswith("two warps"))
    assert all(np.argmax(two.buffers["a"][s:s + 32]) != 0 for s in (0, 32)), "the max must not sit in lane 0"


SHARED_WARP_SUM = '''
import numba
from numba import cuda

TPB = 128


@cuda.jit
def warp_sum(a, out, n):
    sh = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    lane = t % 32
    sh[t] = a[i] if i < n else 0.0
    cuda.syncwarp()
    d = 16
    while d > 0:
        if lane < d:
            sh[t] += sh[t + d]
        cuda.syncwarp()
        d //= 2
    if lane == 0 and i < n:
        out[i // 32] = sh[t]
'''

BUTTERFLY_MAX = '''
import math

import numba
from numba import cuda


@cuda.jit
def subtract_warp_max(a, out, n):
    i = cuda.grid(1)
    v = a[i] if i < n else numba.float32(-math.inf)
    m = v
    d = 16
    while d > 0:
        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, d))
        d //= 2
    if i < n:
        out[i] = v - m
'''


def test_shared_memory_warp_sum_stops_at_two_stars(tmp_path):
    from puzzles.checker import check_file

    path = tmp_path / "variant.py"
    path.write_text(SHARED_WARP_SUM.lstrip(), encoding="utf-8")
    result = check_file(p21_warp_reduce.PUZZLE, path)
    assert result.passed, [f.message for f in result.failures]
    assert result.stars == 2 and "shared memory" in result.next_star


def test_butterfly_without_explicit_broadcast_earns_every_star(tmp_path):
    from puzzles.checker import check_file

    path = tmp_path / "variant.py"
    path.write_text(BUTTERFLY_MAX.lstrip(), encoding="utf-8")
    result = check_file(p24_warp_broadcast.PUZZLE, path)
    assert result.passed and result.stars == 3, [f.message for f in result.failures]
