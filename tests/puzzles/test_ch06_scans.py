"""Chapter 6 (scans): the specs against the worked examples of the descriptions, and the cases against the
edge cases they promise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from puzzles.ch06_scans import p28_hillis_steele as p28
from puzzles.ch06_scans import p29_blelloch as p29
from puzzles.ch06_scans import p30_multi_block_scan as p30
from puzzles.ch06_scans import p31_segmented_scan as p31
from puzzles.ch06_scans import p32_linear_recurrence as p32
from puzzles.model import RunStats
from puzzles.rules import SHARED_LD, SHARED_ST, log_step_work

ROOT = Path(__file__).resolve().parents[2]
MODULES = [p28, p29, p30, p31, p32]


def _solution_constants(module) -> dict[str, int]:
    """Module-level integer constants of the reference solution, read as text (numba.cuda is not imported)."""
    namespace: dict[str, int] = {}
    path = ROOT / "solutions" / module.PUZZLE.solution_file
    for line in path.read_text().splitlines():
        name, sep, value = line.partition(" = ")
        if sep and name.isupper() and name.isidentifier():
            try:
                namespace[name] = int(value.split("#")[0])
            except ValueError:
                pass
    return namespace


def _case(module, name: str):
    return next(c for c in module.PUZZLE.make_cases() if c.name == name)


def _out_name(module) -> str:
    return module.PUZZLE.outputs[0]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_puzzle_is_consistent(module):
    puzzle = module.PUZZLE
    assert puzzle.chapter == 6 and f"p{puzzle.number}_" in Path(module.__file__).name
    assert puzzle.reading and puzzle.reading in puzzle.description
    assert "**What's new:**" in puzzle.description and "**Launch:**" in puzzle.description
    assert 2 <= len(puzzle.hints) <= 3
    cases = puzzle.make_cases()
    assert len(cases) >= 5 and len({c.name for c in cases}) == len(cases)
    for case in cases:
        for step in case.steps:
            assert step.kernel in puzzle.kernels and all(a in case.buffers for a in step.args)
            assert step.block == module.TPB, "every launch uses the puzzle's block size"
        expected = puzzle.spec(**case.buffers)
        out = case.buffers[_out_name(module)]
        assert expected[_out_name(module)].shape == out.shape
        if np.issubdtype(out.dtype, np.floating):
            assert np.isnan(out).all() and np.isfinite(expected[_out_name(module)]).all()
        else:   # the sentinel can never be a right answer, so an unwritten element is always caught
            assert not np.isin(expected[_out_name(module)], out).any()
    # the reference solution is built for the block size the cases launch
    assert _solution_constants(module)["TPB"] == module.TPB
    for folder in ("solutions", "puzzles/starters"):
        assert (ROOT / folder / puzzle.solution_file).is_file()


@pytest.mark.parametrize("module", [p28, p29, p30, p31], ids=lambda m: m.PUZZLE.slug)
def test_integer_cases_have_a_one_element_and_a_ragged_case(module):
    sizes = [c.buffers["n"] for c in module.PUZZLE.make_cases()]
    tile = getattr(module, "TILE", module.TPB)
    assert 1 in sizes
    assert any(n % tile for n in sizes if n > 1), "a size that is not a multiple of the tile"


def test_hillis_steele_worked_example_and_tiles_restart():
    a = np.array([3, 1, -2, 5, 0, 4, -1, 2], np.int32)
    out = p28.spec(a=a, out=a.copy(), n=8)["out"]
    np.testing.assert_array_equal(out, [3, 4, 2, 7, 7, 11, 10, 12])
    assert "`out = [3, 4, 2, 7, 7, 11, 10, 12]`" in p28.DESCRIPTION
    ones = np.ones(200, np.int32)
    out = p28.spec(a=ones, out=ones.copy(), n=200)["out"]
    assert out[63] == 64 and out[64] == 1 and out[199] == 8       # each tile of 64 starts again
    assert p28.SENTINEL not in {int(v) for c in p28.make_cases() for v in c.buffers["a"]}


def test_blelloch_worked_example_is_exclusive():
    a = np.array([3, 1, -2, 5, 0, 4, -1, 2], np.int32)
    out = p29.spec(a=a, out=a.copy(), n=8)["out"]
    np.testing.assert_array_equal(out, [0, 3, 4, 2, 7, 7, 11, 10])
    assert "`out = [0, 3, 4, 2, 7, 7, 11, 10]`" in p29.DESCRIPTION
    assert "[0]  [3]  [4]  [2]  [7]  [7] [11]  [10]" in p29.DESCRIPTION   # the diagram's last row
    case = next(c for c in p29.PUZZLE.make_cases() if c.note.startswith("three tiles"))   # its n varies
    out = p29.spec(**case.buffers)["out"]
    assert out[0] == out[128] == out[256] == 0                        # tiles of 2 * TPB, each starting at 0
    assert p29.TILE == 2 * p29.TPB and case.steps[0].grid == 3
    assert "TILE = 2 * TPB" in (ROOT / "solutions" / p29.PUZZLE.solution_file).read_text()


def test_multi_block_scan_example_and_launches():
    a = np.array([2, -1, 3, 1, 4, 0, -2, 5, 1, 1], np.int32)
    out = p30.spec(a=a, out=a.copy(), block_sums=np.zeros(1, np.int32), n=10, num_blocks=1)["out"]
    np.testing.assert_array_equal(out, [2, 1, 4, 5, 9, 9, 7, 12, 13, 14])
    assert "out        = [2, 1, 4, 5 | 9, 9, 7, 12 | 13, 14]" in p30.DESCRIPTION
    # the description's intermediate numbers, with its tiles of 4
    tiles = [a[s:s + 4] for s in range(0, 10, 4)]
    assert [int(t.sum()) for t in tiles] == [5, 7, 2]
    assert np.cumsum([5, 7, 2]).tolist() == [5, 12, 14]
    for case in p30.make_cases():
        first, second, third = case.steps
        nb = case.buffers["num_blocks"]
        assert nb <= p30.TPB and case.buffers["block_sums"].shape == (nb,)
        assert first.grid == third.grid == nb and second.grid == 1
        assert (first.kernel, second.kernel, third.kernel) == p30.PUZZLE.kernels
    # the largest case fills launch 2's single block
    assert max(c.buffers["num_blocks"] for c in p30.make_cases()) == p30.TPB


def test_segmented_scan_example_and_extremes():
    a = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32)
    flags = np.array([1, 0, 0, 1, 0, 0, 0, 1], np.int32)
    out = p31.spec(a=a, flags=flags, out=a.copy(), n=8)["out"]
    np.testing.assert_array_equal(out, [3, 4, 8, 1, 6, 15, 17, 6])
    assert "out    =  3   4   8   1   6  15  17   6" in p31.DESCRIPTION
    rng = np.random.default_rng(0)
    v = rng.integers(-9, 10, 50).astype(np.int32)
    none, every = np.zeros(50, np.int32), np.ones(50, np.int32)
    np.testing.assert_array_equal(p31.spec(a=v, flags=none, out=v, n=50)["out"], np.cumsum(v))
    np.testing.assert_array_equal(p31.spec(a=v, flags=every, out=v, n=50)["out"], v)
    first_head = none.copy()
    first_head[0] = 1     # element 0 starts a segment with or without its flag
    np.testing.assert_array_equal(p31.spec(a=v, flags=first_head, out=v, n=50)["out"], np.cumsum(v))
    names = {c.name for c in p31.make_cases()}
    assert {"no heads n=128", "every element a head n=77", "n=1"} <= names
    assert all(c.buffers["n"] <= p31.TPB and c.steps[0].grid == 1 for c in p31.make_cases())


def test_linear_recurrence_example_resets_and_order():
    a = np.array([[0.5, 2, 0, 0.5]], np.float32)
    b = np.array([[1, 1, 3, -2]], np.float32)
    h = p32.spec(a=a, b=b, h=a.copy(), L=4)["h"]
    np.testing.assert_allclose(h, [[1, 3, 3, -0.5]])
    assert "`h = [1, 3, 3, -0.5]`" in p32.DESCRIPTION
    # a = 1 everywhere is a plain prefix sum; the swapped operator a1*b2 + b1 would give something else
    ones = np.ones((1, 6), np.float32)
    bb = np.arange(1, 7, dtype=np.float32)[None]
    np.testing.assert_allclose(p32.spec(a=ones, b=bb, h=ones, L=6)["h"], np.cumsum(bb, axis=1))
    resets = _case(p32, "resets 3 sequences, L=64")
    expected = p32.spec(**resets.buffers)["h"]
    zero = resets.buffers["a"] == 0
    np.testing.assert_allclose(expected[zero], resets.buffers["b"][zero])   # a = 0 forgets the past
    assert zero[:, 31].all() and zero[:, 32].all()
    lengths = [c.buffers["L"] for c in p32.make_cases()]
    assert 1 in lengths and any(n % p32.TPB for n in lengths if n > 1) and max(lengths) <= p32.TPB
    assert any((c.buffers["a"] < 0).any() for c in p32.make_cases()), "the order test needs negative a"


def _stats(shared_loads: float, shared_stores: float) -> RunStats:
    return RunStats(
        global_reads_per_thread=1, global_writes_per_thread=1, reads_per_thread_by_array={},
        writes_per_thread_by_array={}, shared_bytes_per_block=512, uses_shared=True, atomics=0,
        global_load_sectors=8, global_store_sectors=8, global_load_requests=2, global_store_requests=2,
        ideal_load_sectors=8, ideal_store_sectors=8, shared_bank_conflicts=0, launches=1, flops=0,
        metrics={SHARED_LD: shared_loads, SHARED_ST: shared_stores})


def test_log_step_rule_tells_a_tree_from_a_prefix_loop():
    rule = log_step_work()
    # the reference Hillis-Steele on one full block of 64: 25 warp-level shared loads, 14 stores
    assert rule.check(_stats(25, 14)) is None
    # puzzle 12's loop over the prefix on the same block: 32 + 64 loads, one store per warp
    assert "96 shared-memory loads for 2 stores" in rule.check(_stats(96, 2))
    assert "no shared-memory instruction counts" in rule.check(
        RunStats(**{**_stats(1, 1).__dict__, "metrics": {}}))
    for module in MODULES:          # every scan puzzle asks for log-step work at ★★
        tier = next(s for s in module.PUZZLE.stars if s.stars == 2)
        assert any(r.description == rule.description for r in tier.rules)
