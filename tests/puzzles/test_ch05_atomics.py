"""Chapter 5 (atomics and irregular work): the specs agree with the worked examples of the descriptions, the
cases contain the contention, the empty rows and the ties the puzzles promise, the launches match the files'
constants, and the star tiers tell a good kernel from correct-but-wasteful ones."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from puzzles.ch05_atomics import p25_histogram, p26_spmv_csr, p27_argmax

ROOT = Path(__file__).resolve().parents[2]
MODULES = (p25_histogram, p26_spmv_csr, p27_argmax)


def _constants(path: Path) -> dict[str, object]:
    found: dict[str, object] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return found


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_cases_are_well_formed(module):
    puzzle = module.PUZZLE
    cases = puzzle.make_cases()
    assert len(cases) >= 5 and len({c.name for c in cases}) == len(cases)
    for case in cases:
        expected = puzzle.spec(**case.buffers)
        for name in puzzle.outputs:
            assert expected[name].shape == case.buffers[name].shape
            assert expected[name].dtype.kind == case.buffers[name].dtype.kind
        step = case.steps[0]
        assert step.kernel in puzzle.kernels and step.block == module.TPB
        assert all(a in case.buffers for a in step.args)
    assert puzzle.reading in puzzle.description and "**What's new:**" in puzzle.description
    for folder, file in (("solutions", puzzle.solution_file), ("puzzles/starters", puzzle.starter_file)):
        assert _constants(ROOT / folder / file).get("TPB") == module.TPB, f"{folder}/{file}: TPB"


def test_histogram_example_and_contention():
    hist = p25_histogram.spec(values=np.array([3, 1, 3, 0, 3, 99], np.int32), hist=None, n=6)["hist"]
    assert hist.sum() == 6 and hist[3] == 3 and hist[[0, 1, 99]].tolist() == [1, 1, 1]
    assert "`hist[3] = 3`" in p25_histogram.DESCRIPTION
    cases = p25_histogram.make_cases()
    for case in cases:
        assert (case.buffers["hist"] == 0).all(), "atomics add into hist: it must start at 0"
        v = case.buffers["values"]
        assert v.min() >= 0 and v.max() < p25_histogram.BINS and case.buffers["n"] <= p25_histogram.N_MAX
        assert all(s.grid == p25_histogram.BLOCKS for s in case.steps)
    sizes = [c.buffers["n"] for c in cases]
    assert p25_histogram.N_MAX in sizes and 1 in sizes
    assert any(np.unique(c.buffers["values"]).size == 1 and c.buffers["n"] > 1000 for c in cases), \
        "a case where every thread hits one bin"
    # the per-thread read budget is exactly the grid-stride share of the longest case
    assert p25_histogram.PER_THREAD * p25_histogram.THREADS == p25_histogram.N_MAX


def test_spmv_example_empty_rows_and_long_row():
    indptr = np.array([0, 2, 2, 5], np.int32)
    indices = np.array([0, 3, 1, 2, 3], np.int32)
    data = np.array([10, -2, 3, 1, 4], np.float32)
    x = np.array([1, 2, 3, 4], np.float32)
    y = p26_spmv_csr.spec(indptr=indptr, indices=indices, data=data, x=x, y=None, rows=3)["y"]
    np.testing.assert_array_equal(y, [2, 0, 25])
    assert "= [2, 0, 25]" in p26_spmv_csr.DESCRIPTION
    cases = p26_spmv_csr.make_cases()
    example = cases[0].buffers
    np.testing.assert_array_equal(example["indptr"], indptr)
    np.testing.assert_array_equal(example["indices"], indices)
    lengths = np.concatenate([np.diff(c.buffers["indptr"]) for c in cases])
    assert (lengths == 0).sum() >= 3 and lengths.max() == p26_spmv_csr.LONGEST
    assert any(c.buffers["rows"] % p26_spmv_csr.ROWS_PER_BLOCK for c in cases), "a block with an idle warp"
    for case in cases:
        b = case.buffers
        assert b["indptr"][0] == 0 and b["indptr"][-1] == b["indices"].size == b["data"].size
        assert (b["indices"] < b["x"].size).all() and (b["data"] != 0).all() and (b["x"] != 0).all()
        assert np.isnan(b["y"]).all()


def _shuffle_argmax(row: np.ndarray, tie_break: bool) -> int:
    """What the reference's warp computes for one row: a strided scan per lane, then five shfl_down steps.

    With ``tie_break`` False the combine step takes the other lane's candidate only when it is larger.
    """
    best = np.full(32, -np.inf)
    idx = np.arange(32)
    for lane in range(min(32, row.size)):
        cols = np.arange(lane, row.size, 32)
        idx[lane] = cols[np.argmax(row[cols])]
        best[lane] = row[idx[lane]]
    for d in (16, 8, 4, 2, 1):
        ob = np.concatenate([best[d:], best[32 - d:]])      # lanes without a partner get their own value
        oi = np.concatenate([idx[d:], idx[32 - d:]])
        take = (ob > best) | (tie_break & (ob == best) & (oi < idx))
        best, idx = np.where(take, ob, best), np.where(take, oi, idx)
    return int(idx[0])


def test_argmax_example_ties_and_masks():
    a = np.array([[2, 7, -1, 7], [-5, -3, -3, -8], [4, 4, 4, 4]], np.float32)
    np.testing.assert_array_equal(p27_argmax.spec(a=a, out=None, rows=3, cols=4)["out"], [1, 1, 0])
    assert "out = [1," in p27_argmax.DESCRIPTION
    cases = p27_argmax.make_cases()
    for case in cases:
        assert (case.buffers["out"] == p27_argmax.SENTINEL).all()
    cross = next(c for c in cases if c.name.startswith("ties across lanes")).buffers["a"]
    answers = p27_argmax.spec(a=cross, out=None, rows=4, cols=cross.shape[1])["out"]
    np.testing.assert_array_equal(answers, [3, 2, 63, 61])
    for row, answer in zip(cross, answers):   # the data defeats a combine step that ignores the column
        assert _shuffle_argmax(row, tie_break=True) == answer
        assert _shuffle_argmax(row, tie_break=False) != answer
    masked = next(c for c in cases if c.name.startswith("masked")).buffers["a"]
    assert np.isneginf(masked[-1]).all() and np.isneginf(masked).any(axis=1).all()
    assert any((c.buffers["a"] < 0).all() for c in cases if c.buffers["a"].size > 1)
    assert max(c.buffers["cols"] for c in cases) == p27_argmax.COLS_MAX


GLOBAL_ATOMICS = '''
from numba import cuda


@cuda.jit
def histogram(values, hist, n):
    i = cuda.grid(1)
    while i < n:
        cuda.atomic.add(hist, values[i], 1)
        i += cuda.gridsize(1)
'''

LANE_ZERO_ROW = '''
from numba import cuda


@cuda.jit
def spmv(indptr, indices, data, x, y, rows):
    row = cuda.grid(1) // 32
    if row < rows and cuda.laneid == 0:
        s = 0.0
        for k in range(indptr[row], indptr[row + 1]):
            s += data[k] * x[indices[k]]
        y[row] = s
'''

LANE_ZERO_ARGMAX = '''
from numba import cuda


@cuda.jit
def row_argmax(a, out, rows, cols):
    row = cuda.grid(1) // 32
    if row < rows and cuda.laneid == 0:
        best = a[row, 0]
        idx = 0
        for j in range(1, cols):
            if a[row, j] > best:
                best = a[row, j]
                idx = j
        out[row] = idx
'''


@pytest.mark.parametrize("module, source, stars, missing", [
    (p25_histogram, GLOBAL_ATOMICS, 2, "global atomics"),         # one global atomic per value
    (p26_spmv_csr, LANE_ZERO_ROW, 1, "spread"),                   # lane 0 carries the whole row
    (p27_argmax, LANE_ZERO_ARGMAX, 1, "split"),                   # lane 0 scans the whole row
], ids=["histogram-global-atomics", "spmv-lane-zero", "argmax-lane-zero"])
def test_correct_but_wasteful_kernels_lose_stars(tmp_path, module, source, stars, missing):
    from puzzles.checker import check_file

    path = tmp_path / "variant.py"
    path.write_text(source.lstrip(), encoding="utf-8")
    result = check_file(module.PUZZLE, path)
    assert result.passed, [f.message for f in result.failures]
    assert result.stars == stars, (result.stars, result.next_star)
    assert missing in result.next_star
