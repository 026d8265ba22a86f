"""Chapter 2 (shared memory): the specs agree with the worked examples their descriptions show, the cases
contain the promised edge cases, the launches match the block constants of the starter and the reference, and
the read limits that make each puzzle about reuse are in place."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

from puzzles.ch02_shared import (
    p08_shared,
    p09_pooling,
    p10_dot_product,
    p11_conv_1d,
    p12_prefix_sum,
    p13_axis_sum,
    p14_matmul,
)

ROOT = Path(__file__).resolve().parents[2]
MODULES = (p08_shared, p09_pooling, p10_dot_product, p11_conv_1d, p12_prefix_sum, p13_axis_sum, p14_matmul)
F32 = np.float32


def _constants(path: Path) -> dict[str, int]:
    """Module-level integer constants of a solution or starter file (NAME = <int expression of constants>)."""
    found: dict[str, int] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = eval(compile(ast.Expression(node.value), str(path), "eval"),
                                                 {}, dict(found))
            except Exception:
                pass
    return found


def _block_constant(module) -> tuple[str, int]:
    return ("TILE", module.TILE) if hasattr(module, "TILE") else ("TPB", module.TPB)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_launches_match_the_files_block_constant(module):
    puzzle = module.PUZZLE
    name, value = _block_constant(module)
    for folder, file in (("solutions", puzzle.solution_file), ("puzzles/starters", puzzle.starter_file)):
        consts = _constants(ROOT / folder / file)
        assert consts.get(name) == value, f"{folder}/{file}: {name} must be {value}, as the launches assume"
    for case in puzzle.make_cases():
        for step in case.steps:
            block = (step.block,) if isinstance(step.block, int) else tuple(step.block)
            assert all(b == value for b in block), f"{case.name}: block {step.block} is not {name}={value}"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_cases_are_well_formed_and_shared_memory_is_required(module):
    puzzle = module.PUZZLE
    cases = puzzle.make_cases()
    assert len(cases) >= 5 and len({c.name for c in cases}) == len(cases)
    for case in cases:
        out = case.buffers["out"]
        assert out.dtype == F32 and np.isnan(out).all(), f"{case.name}: `out` must start as NaN"
        expected = puzzle.spec(**case.buffers)["out"]
        assert expected.shape == out.shape and np.isfinite(expected).all()
    rules = [r.description for r in puzzle.constraints]
    assert "uses shared memory" in rules
    assert any(r.startswith("at most") and "read" in r for r in rules), "chapter 2 limits global reads"
    assert puzzle.reading in puzzle.description and "**What's new:**" in puzzle.description
    assert 2 <= len(puzzle.hints) <= 3 and {s.stars for s in puzzle.stars} == {2, 3}


def _random_values(cases, names):
    for case in cases:
        if case.name.startswith("random"):
            for name in names:
                yield case.name, case.buffers[name]


@pytest.mark.parametrize("module, names", [(p09_pooling, ["a"]), (p10_dot_product, ["a", "b"]),
                                           (p11_conv_1d, ["a", "w"]), (p12_prefix_sum, ["a"]),
                                           (p13_axis_sum, ["a"]), (p14_matmul, ["a", "b"])],
                         ids=lambda x: getattr(getattr(x, "PUZZLE", None), "slug", ""))
def test_random_terms_are_far_from_zero(module, names):
    """A dropped or doubled term must move the answer by far more than the tolerance."""
    for case_name, values in _random_values(module.PUZZLE.make_cases(), names):
        assert np.abs(values).min() >= 0.5, case_name
        if values.size >= 8:   # a weight vector of 2-4 may come out all of one sign
            assert (values < 0).any() and (values > 0).any(), case_name


def test_shared_reverse_worked_example():
    a = np.arange(11, dtype=F32)
    out = p08_shared.spec(out=None, a=a, n=11)["out"]
    np.testing.assert_array_equal(out, [7, 6, 5, 4, 3, 2, 1, 0, 10, 9, 8])
    assert "`out = [7, 6, 5, 4, 3, 2, 1, 0, 10, 9, 8]`" in p08_shared.DESCRIPTION
    sizes = [c.buffers["n"] for c in p08_shared.make_cases()]
    assert any(n % p08_shared.TPB and n > p08_shared.TPB for n in sizes), "a short last chunk after full ones"
    assert 1 in sizes


def test_pooling_worked_example_and_short_inputs():
    out = p09_pooling.spec(out=None, a=np.array([1, 2, 3, 4, 5], F32), n=5)["out"]
    np.testing.assert_array_equal(out, [1, 3, 6, 9, 12])
    assert "`out = [1, 3, 6, 9, 12]`" in p09_pooling.DESCRIPTION
    sizes = {c.buffers["n"] for c in p09_pooling.make_cases()}
    assert {1, 2, 3, p09_pooling.TPB} <= sizes and max(sizes) <= p09_pooling.TPB
    assert all(c.steps[0].grid == 1 for c in p09_pooling.make_cases())


def test_dot_product_partials_add_up_to_the_dot_product():
    tpb = p10_dot_product.TPB
    for case in p10_dot_product.make_cases():
        a, b, n = case.buffers["a"], case.buffers["b"], case.buffers["n"]
        partial = p10_dot_product.spec(**case.buffers)["out"]
        assert partial.size == math.ceil(n / tpb) == case.steps[0].grid
        np.testing.assert_allclose(partial.sum(), np.dot(a.astype(np.float64), b), rtol=1e-5, atol=1e-4)
    sizes = [c.buffers["n"] for c in p10_dot_product.make_cases()]
    assert 1 in sizes and any(n % tpb == 1 and n > tpb for n in sizes) and any(n % tpb == 0 for n in sizes)
    # the description's tree in miniature: 3 1 4 1 5 9 2 6 -> 8 10 6 7 -> 14 17 -> 31
    s = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    steps = []
    while s.size > 1:
        s = s[: s.size // 2] + s[s.size // 2:]
        steps.append(s.tolist())
    assert steps == [[8, 10, 6, 7], [14, 17], [31]]


def test_conv_1d_worked_example_and_edge_cases():
    out = p11_conv_1d.spec(out=None, a=np.array([1, 2, 3, 4, 5], F32), w=np.array([1, 0, -1], F32),
                           n=5, k=3)["out"]
    np.testing.assert_array_equal(out, [-2, -2, -2, 4, 5])
    assert "`out = [-2, -2, -2, 4, 5]`" in p11_conv_1d.DESCRIPTION
    cases = p11_conv_1d.make_cases()
    ks = {c.buffers["k"] for c in cases}
    assert 1 in ks and p11_conv_1d.MAX_K in ks and max(ks) <= p11_conv_1d.MAX_K
    assert any(c.buffers["n"] < c.buffers["k"] for c in cases)
    assert any(c.buffers["n"] > p11_conv_1d.TPB and c.buffers["k"] == p11_conv_1d.MAX_K for c in cases), \
        "a block whose full halo lies in the next block's range"
    assert any(c.buffers["n"] % p11_conv_1d.TPB for c in cases)
    # the reference's shared arrays (tile + halo, weights) fit the budget
    assert (p11_conv_1d.TPB + 2 * p11_conv_1d.MAX_K - 1) * 4 <= p11_conv_1d.SHARED_BUDGET


def test_prefix_sum_miniature_example(monkeypatch):
    monkeypatch.setattr(p12_prefix_sum, "TPB", 4)   # the description's example uses segments of 4
    a = np.array([3, 1, -2, 5, 4, 0.5, 1, -1, 2, 6], F32)
    out = p12_prefix_sum.spec(out=None, a=a, n=a.size)["out"]
    np.testing.assert_array_equal(out, [3, 4, 2, 7, 4, 4.5, 5.5, 4.5, 2, 8])


def test_prefix_sum_segments():
    tpb = p12_prefix_sum.TPB
    sizes = [c.buffers["n"] for c in p12_prefix_sum.make_cases()]
    assert 1 in sizes and any(n % tpb == 1 and n > tpb for n in sizes), "a one-element last segment"
    assert sum(n > tpb for n in sizes) >= 3, "several blocks, each scanning its own segment"


def test_axis_sum_worked_example_and_read_limit_bites():
    a = np.array([[1, 2, 3, 4, 5], [-1, 0.5, 2, 2, -3], [10, 20, 30, 40, 50]], F32)
    np.testing.assert_array_equal(p13_axis_sum.spec(out=None, a=a, cols=5)["out"], [15, 0.5, 150])
    assert "`out = [15, 0.5, 150]`" in p13_axis_sum.DESCRIPTION
    cols = [c.buffers["cols"] for c in p13_axis_sum.make_cases()]
    assert max(cols) == p13_axis_sum.MAX_COLS and p13_axis_sum.MAX_READS == math.ceil(max(cols) / 64)
    assert any(c > p13_axis_sum.TPB for c in cols), "rows wider than the block need the stride loop"
    # a row that one thread would sum alone needs more reads than the limit, in some case
    assert any(c > p13_axis_sum.MAX_READS for c in cols)


def test_matmul_worked_example_and_ragged_sizes():
    a = np.array([[1, 2, 3], [4, 5, 6]], F32)
    b = np.array([[1, 2], [0, 1], [-1, 3]], F32)
    np.testing.assert_array_equal(p14_matmul.spec(out=None, a=a, b=b, m=2, k=3, n=2)["out"],
                                  [[-2, 13], [-2, 31]])
    assert "`out = [[-2, 13], [-2, 31]]`" in p14_matmul.DESCRIPTION
    tile = p14_matmul.TILE
    shapes = [(c.buffers["m"], c.buffers["k"], c.buffers["n"]) for c in p14_matmul.make_cases()]
    assert any(all(d % tile for d in s) and max(s) > tile for s in shapes), "fits no tile in any dimension"
    assert max(k for _, k, _ in shapes) == p14_matmul.MAX_K
    assert p14_matmul.MAX_READS == math.ceil(p14_matmul.MAX_K / tile)
    assert any(k > p14_matmul.MAX_READS for _, k, _ in shapes), "an untiled kernel breaks the read limit"
    assert 2 * tile * tile * 4 <= p14_matmul.SHARED_BUDGET


INTERLEAVED_DOT = '''
import numba
from numba import cuda

TPB = 64


@cuda.jit
def dot_kernel(out, a, b, n):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < n:
        s[t] = a[i] * b[i]
    else:
        s[t] = 0.0
    cuda.syncthreads()
    stride = 1
    while stride < TPB:
        idx = 2 * stride * t
        if idx < TPB:
            s[idx] += s[idx + stride]
        cuda.syncthreads()
        stride *= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]
'''

CHUNKED_AXIS_SUM = '''
import numba
from numba import cuda

TPB = 64


@cuda.jit
def row_sum_kernel(out, a, cols):
    s = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    chunk = (cols + TPB - 1) // TPB
    acc = 0.0
    for c in range(t * chunk, min((t + 1) * chunk, cols)):
        acc += a[r, c]
    s[t] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[r] = s[0]
'''

TRANSPOSED_MATMUL = '''
import numba
from numba import cuda

TILE = 16


@cuda.jit
def matmul_kernel(out, a, b, m, k, n):
    sa = cuda.shared.array((TILE, TILE), numba.float32)
    sb = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    r = cuda.blockIdx.y * TILE + ty
    rl = cuda.blockIdx.y * TILE + tx
    cl = cuda.blockIdx.x * TILE + ty
    acc = 0.0
    for t0 in range(0, k, TILE):
        if rl < m and t0 + ty < k:
            sa[tx, ty] = a[rl, t0 + ty]
        else:
            sa[tx, ty] = 0.0
        if t0 + tx < k and cl < n:
            sb[tx, ty] = b[t0 + tx, cl]
        else:
            sb[tx, ty] = 0.0
        cuda.syncthreads()
        for j in range(TILE):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()
    if r < m and c < n:
        out[r, c] = acc
'''


@pytest.mark.parametrize("module, source, stars, missing", [
    (p10_dot_product, INTERLEAVED_DOT, 2, "bank conflicts"),      # s[2*stride*t]: 2-way conflicts
    (p13_axis_sum, CHUNKED_AXIS_SUM, 1, "coalesced"),             # a contiguous chunk per thread
    (p14_matmul, TRANSPOSED_MATMUL, 1, "coalesced"),              # threadIdx.x walks down a column
], ids=["dot-interleaved-tree", "axis-sum-chunks", "matmul-transposed-loads"])
def test_correct_but_wasteful_kernels_lose_stars(tmp_path, module, source, stars, missing):
    """The star rules tell a good kernel from a correct but wasteful one (and the slack is not too loose)."""
    from puzzles.checker import check_file

    path = tmp_path / "variant.py"
    path.write_text(source.lstrip(), encoding="utf-8")
    result = check_file(module.PUZZLE, path)
    assert result.passed, [f.message for f in result.failures]
    assert result.stars == stars, (result.stars, result.next_star)
    assert missing in result.next_star
