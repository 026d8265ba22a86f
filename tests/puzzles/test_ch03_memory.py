"""Chapter 3 (memory efficiency): the specs agree with the worked examples of the descriptions, the cases hold
the promised edge cases, the launches match the constants of the starter and the reference, and the star
tiers tell the good kernel from correct-but-wasteful ones."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from puzzles.ch03_memory import (
    p15_aos_to_soa,
    p16_transpose_naive,
    p17_transpose_tiled,
    p18_grid_stride,
    p19_reduce_sequential,
    p20_arithmetic_intensity,
)

ROOT = Path(__file__).resolve().parents[2]
MODULES = (p15_aos_to_soa, p16_transpose_naive, p17_transpose_tiled, p18_grid_stride, p19_reduce_sequential,
           p20_arithmetic_intensity)
F32 = np.float32


def _constants(path: Path) -> dict[str, int]:
    """Module-level constants of a solution or starter file (NAME = <expression of earlier constants>)."""
    found: dict[str, int] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = eval(compile(ast.Expression(node.value), str(path), "eval"),
                                                 {}, dict(found))
            except Exception:
                pass
    return found


def _block(step) -> tuple[int, ...]:
    return (step.block,) if isinstance(step.block, int) else tuple(step.block)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_cases_are_well_formed(module):
    puzzle = module.PUZZLE
    cases = puzzle.make_cases()
    assert len(cases) >= 5 and len({c.name for c in cases}) == len(cases)
    for case in cases:
        for name in puzzle.outputs:
            start = case.buffers[name]
            assert np.isnan(start).all(), f"{case.name}: `{name}` must start as NaN"
        expected = puzzle.spec(**case.buffers)
        for name in puzzle.outputs:
            assert expected[name].shape == case.buffers[name].shape and np.isfinite(expected[name]).all()
        for step in case.steps:
            assert step.kernel in puzzle.kernels and all(a in case.buffers for a in step.args)
    assert puzzle.reading and puzzle.reading in puzzle.description
    assert "**What's new:**" in puzzle.description and "**Launch:**" in puzzle.description
    assert 2 <= len(puzzle.hints) <= 3


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_launches_match_the_files_constants(module):
    puzzle = module.PUZZLE
    names = [n for n in ("TPB", "TILE", "ROWS", "BLOCKS") if hasattr(module, n)]
    for folder, file in (("solutions", puzzle.solution_file), ("puzzles/starters", puzzle.starter_file)):
        consts = _constants(ROOT / folder / file)
        for name in names:
            assert consts.get(name) == getattr(module, name), f"{folder}/{file}: {name} differs from the puzzle"
    for case in puzzle.make_cases():
        block = _block(case.steps[0])
        if module is p17_transpose_tiled:
            assert block == (module.TILE, module.ROWS)
        else:
            assert block == (module.TPB,)


def test_aos_to_soa_example_and_sizes():
    aos = np.arange(1, 9, dtype=F32).reshape(2, 4)
    soa = p15_aos_to_soa.spec(aos=aos, soa=None, n=2)["soa"]
    np.testing.assert_array_equal(soa, [[1, 5], [2, 6], [3, 7], [4, 8]])
    assert "`soa = [[1, 5], [2, 6], [3, 7], [4, 8]]`" in p15_aos_to_soa.DESCRIPTION
    sizes = [c.buffers["n"] for c in p15_aos_to_soa.make_cases()]
    # ★★★ must be reachable: every row of soa starts on a sector boundary, or the array is tiny
    assert all(n in (1, 2) or n % 8 == 0 for n in sizes)
    assert 1 in sizes and any(n % p15_aos_to_soa.TPB for n in sizes if n > 2)
    for case in p15_aos_to_soa.make_cases():   # fields land in different ranges: a swap cannot pass
        aos = case.buffers["aos"]
        if aos.shape[0] > 2:
            assert (aos[:, 1:].min(axis=0) > aos[:, :-1].max(axis=0)).all()


def test_transpose_naive_example_and_shapes():
    a = np.array([[1, 2, 3], [4, 5, 6]], F32)
    out = p16_transpose_naive.spec(a=a, out=None, rows=2, cols=3)["out"]
    np.testing.assert_array_equal(out, [[1, 4], [2, 5], [3, 6]])
    assert "`out = [[1, 4], [2, 5], [3, 6]]`" in p16_transpose_naive.DESCRIPTION
    shapes = [c.buffers["a"].shape for c in p16_transpose_naive.make_cases()]
    assert (1, 1) in shapes and any(r == 1 for r, c in shapes) and any(c == 1 for r, c in shapes)
    assert any(r != c and r % 8 and c % 8 for r, c in shapes), "a non-square shape far from round numbers"
    for case in p16_transpose_naive.make_cases():
        a = case.buffers["a"]
        assert np.unique(a).size == a.size, f"{case.name}: values must be distinct"


def test_transpose_tiled_shapes_and_padding():
    shapes = [c.buffers["a"].shape for c in p17_transpose_tiled.make_cases()]
    tile = p17_transpose_tiled.TILE
    assert any(r % tile and c % tile and r > tile and c > tile for r, c in shapes), "partial tiles both ways"
    assert any(r == 1 for r, c in shapes) and any(c == 1 for r, c in shapes)
    assert all(d <= 3 or d % 8 == 0 for s in shapes for d in s), "rows must start on sector boundaries"
    assert p17_transpose_tiled.BUDGET == tile * (tile + 1) * 4      # room for the padding column, no more
    for case in p17_transpose_tiled.make_cases():
        step = case.steps[0]
        rows, cols = case.buffers["a"].shape
        assert step.grid == (-(-cols // tile), -(-rows // tile))
    assert _constants(ROOT / "solutions" / "transpose_tiled.py")["PADDED"] == tile + 1


def test_grid_stride_example_and_budget():
    x, y = np.array([2, 0.5, -4], F32), np.array([1, 1, 1], F32)
    out = p18_grid_stride.spec(alpha=p18_grid_stride.ALPHA, x=x, y=y, out=None, n=3)["out"]
    np.testing.assert_array_equal(out, [-2, 0.25, 7])
    assert "`out = [-2, 0.25, 7]`" in p18_grid_stride.DESCRIPTION
    cases = p18_grid_stride.make_cases()
    sizes = [c.buffers["n"] for c in cases]
    threads = p18_grid_stride.THREADS
    assert max(sizes) == p18_grid_stride.N_MAX and p18_grid_stride.N_MAX % threads
    assert any(n < threads for n in sizes) and 1 in sizes
    assert all(c.steps[0].grid == p18_grid_stride.BLOCKS for c in cases), "the grid must not grow with n"
    assert p18_grid_stride.EVEN == -(-p18_grid_stride.N_MAX // threads)
    for case in cases:
        assert (np.abs(case.buffers["x"]) >= 0.5).all() and (np.abs(case.buffers["y"]) >= 0.5).all()


def test_reduce_example_and_empty_blocks():
    a = np.array([3, 1, -2, 5, 0, 4, -1, 2], F32)
    out = p19_reduce_sequential.spec(a=a, out=None, n=8)["out"]
    np.testing.assert_array_equal(out, [12, 0, 0, 0])
    assert "so `out[0] = 12`" in p19_reduce_sequential.DESCRIPTION
    cases = p19_reduce_sequential.make_cases()
    tpb, blocks = p19_reduce_sequential.TPB, p19_reduce_sequential.BLOCKS
    sizes = [c.buffers["n"] for c in cases]
    assert 1 in sizes and any(n % tpb for n in sizes) and blocks * tpb in sizes
    assert all(n <= blocks * tpb and c.steps[0].grid == blocks for n, c in zip(sizes, cases))
    for case in cases[1:]:      # past the worked example: exact integer sums, no zero terms
        a = case.buffers["a"]
        assert (a == np.round(a)).all() and (a != 0).all()


def test_reduce_busy_warps_rule_counts_warp_level_stores():
    from puzzles.model import RunStats

    def stats(stores: int) -> RunStats:
        return RunStats(0, 0, {}, {}, 0, True, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0,
                        metrics={p19_reduce_sequential.SHARED_STORES: stores})

    rule = p19_reduce_sequential.busy_warps()
    blocks = p19_reduce_sequential.BLOCKS
    assert rule.check(stats(12 * blocks)) is None                   # the sequential tree
    assert rule.check(stats(27 * blocks)) is not None               # the `t % (2*s)` tree
    assert rule.check(RunStats(0, 0, {}, {}, 0, True, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0)) is not None


def test_arithmetic_intensity_example_and_flop_case():
    out = p20_arithmetic_intensity.spec(x=np.array([4, 0], F32), y=None, n=2, a=F32(0.5), b=F32(1), k=3)["y"]
    np.testing.assert_array_equal(out, [2.25, 1.75])
    assert "so `y = [2.25, 1.75]`" in p20_arithmetic_intensity.DESCRIPTION
    cases = p20_arithmetic_intensity.make_cases()
    ks = [c.buffers["k"] for c in cases]
    assert 0 in ks and max(ks) == p20_arithmetic_intensity.K_MAX
    big = next(c for c in cases if c.buffers["k"] == p20_arithmetic_intensity.K_MAX)
    assert big.buffers["n"] % p20_arithmetic_intensity.TPB == 0, "the FLOP rule is exact only on full warps"
    for case in cases:
        assert isinstance(case.buffers["a"], np.float32) and isinstance(case.buffers["b"], np.float32)
    # one step more or less must be visible at every k the cases use
    x = cases[-1].buffers["x"]
    for k in ks:
        if k:
            one_more = p20_arithmetic_intensity.spec(x=x, y=None, n=x.size, a=p20_arithmetic_intensity.A,
                                                     b=p20_arithmetic_intensity.B, k=k + 1)["y"]
            exact = p20_arithmetic_intensity.spec(x=x, y=None, n=x.size, a=p20_arithmetic_intensity.A,
                                                  b=p20_arithmetic_intensity.B, k=k)["y"]
            assert not np.allclose(one_more, exact, rtol=p20_arithmetic_intensity.PUZZLE.rtol,
                                   atol=p20_arithmetic_intensity.PUZZLE.atol)


# Correct kernels that waste something, and the stars they must stop at.
RECORD_PER_THREAD = '''
from numba import cuda


@cuda.jit
def aos_to_soa(aos, soa, n):
    r = cuda.grid(1)
    if r < n:
        for f in range(4):
            soa[f, r] = aos[r, f]
'''

WALK_A_IN_ORDER = '''
from numba import cuda


@cuda.jit
def transpose_naive(a, out, rows, cols):
    t = cuda.grid(1)
    if t < rows * cols:
        out[t % cols, t // cols] = a[t // cols, t % cols]
'''

UNPADDED_TILE = '''
import numba
from numba import cuda

TILE = 32
ROWS = 8


@cuda.jit
def transpose_tiled(a, out, rows, cols):
    tile = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * TILE
    c0 = cuda.blockIdx.x * TILE
    for y in range(ty, TILE, ROWS):
        if r0 + y < rows and c0 + tx < cols:
            tile[y, tx] = a[r0 + y, c0 + tx]
    cuda.syncthreads()
    for y in range(ty, TILE, ROWS):
        if c0 + y < cols and r0 + tx < rows:
            out[c0 + y, r0 + tx] = tile[tx, y]
'''

CHUNK_PER_THREAD = '''
from numba import cuda


@cuda.jit
def saxpy(alpha, x, y, out, n):
    t = cuda.grid(1)
    chunk = (n + cuda.gridsize(1) - 1) // cuda.gridsize(1)
    for i in range(t * chunk, min(t * chunk + chunk, n)):
        out[i] = alpha * x[i] + y[i]
'''

DIVERGENT_TREE = '''
import numba
from numba import cuda

TPB = 128


@cuda.jit
def block_sum(a, out, n):
    x = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    x[t] = a[i] if i < n else 0.0
    cuda.syncthreads()
    s = 1
    while s < TPB:
        if t % (2 * s) == 0:
            x[t] += x[t + s]
        cuda.syncthreads()
        s *= 2
    if t == 0:
        out[cuda.blockIdx.x] = x[0]
'''

STRIDED_TREE = DIVERGENT_TREE.replace(
    "        if t % (2 * s) == 0:\n            x[t] += x[t + s]\n",
    "        j = 2 * s * t\n        if j < TPB:\n            x[j] += x[j + s]\n")

STEPS_IN_MEMORY = '''
from numba import cuda


@cuda.jit
def iterate(x, y, n, a, b, k):
    i = cuda.grid(1)
    if i < n:
        y[i] = x[i]
        for _ in range(k):
            y[i] = a * y[i] + b
'''

THREE_FLOPS_PER_STEP = '''
from numba import cuda


@cuda.jit
def iterate(x, y, n, a, b, k):
    i = cuda.grid(1)
    if i < n:
        v = x[i]
        c = b / (1 - a)
        for _ in range(k):
            v = (v - c) * a + c
        y[i] = v
'''


@pytest.mark.parametrize("module, source, stars, missing", [
    (p15_aos_to_soa, RECORD_PER_THREAD, 2, "coalesced"),            # loads 16 bytes apart
    (p16_transpose_naive, WALK_A_IN_ORDER, 2, "stores"),            # coalesced loads, strided stores
    (p17_transpose_tiled, UNPADDED_TILE, 2, "bank conflict"),       # a 32x32 tile read by column
    (p18_grid_stride, CHUNK_PER_THREAD, 2, "coalesced"),            # CPU-style contiguous chunks
    (p19_reduce_sequential, DIVERGENT_TREE, 1, "divergent"),        # t % (2*s): every warp every step
    (p19_reduce_sequential, STRIDED_TREE, 2, "bank conflict"),      # x[2*s*t]: strided lanes
    (p20_arithmetic_intensity, STEPS_IN_MEMORY, 1, "8 bytes"),      # y[i] read and written every step
    (p20_arithmetic_intensity, THREE_FLOPS_PER_STEP, 2, "FLOPs"),   # 3 FLOPs where 2 do
], ids=["aos-record-per-thread", "transpose-walk-a", "tiled-unpadded", "grid-stride-chunks",
        "reduce-divergent", "reduce-strided", "intensity-in-memory", "intensity-3-flops"])
def test_correct_but_wasteful_kernels_lose_stars(tmp_path, module, source, stars, missing):
    from puzzles.checker import check_file

    path = tmp_path / "variant.py"
    path.write_text(source.lstrip(), encoding="utf-8")
    result = check_file(module.PUZZLE, path)
    assert result.passed, [f.message for f in result.failures]
    assert result.stars == stars, (result.stars, result.next_star)
    assert missing in result.next_star
