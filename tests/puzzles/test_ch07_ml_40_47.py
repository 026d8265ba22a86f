"""Chapter 7, puzzles 40-47: the specs against hand-worked numbers, and the cases against their promises."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from puzzles.ch07_ml import p40_int8_matmul as p40
from puzzles.ch07_ml import p41_int4_gemv as p41
from puzzles.ch07_ml import p42_sparse_24_gemv as p42
from puzzles.ch07_ml import p43_attention as p43
from puzzles.ch07_ml import p44_flash_attention as p44
from puzzles.ch07_ml import p45_paged_attention as p45
from puzzles.ch07_ml import p46_speculative_verify as p46
from puzzles.ch07_ml import p47_prune_threshold as p47

ROOT = Path(__file__).resolve().parents[2]
MODULES = [p40, p41, p42, p43, p44, p45, p46, p47]


def _solution_constants(module) -> dict:
    """Module-level int constants of the puzzle's reference solution, read without importing numba.cuda."""
    path = ROOT / "solutions" / module.PUZZLE.solution_file
    namespace: dict = {}
    for line in path.read_text().splitlines():
        name, sep, value = line.partition(" = ")
        if sep and name.isupper() and name.isidentifier():
            namespace[name] = int(value.split("#")[0])
    return namespace


def _by_name(module, name: str):
    return next(c for c in module.PUZZLE.make_cases() if c.name == name)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_puzzle_is_consistent(module):
    puzzle = module.PUZZLE
    assert puzzle.chapter == 7 and 40 <= puzzle.number <= 47
    assert f"p{puzzle.number}_" in Path(module.__file__).name
    cases = puzzle.make_cases()
    assert len(cases) >= 4 and len({c.name for c in cases}) == len(cases)
    assert len(puzzle.hints) >= 2 and puzzle.reading and puzzle.reading in puzzle.description
    for case in cases:
        for step in case.steps:
            assert step.kernel in puzzle.kernels
            assert all(a in case.buffers for a in step.args)
        expected = puzzle.spec(**case.buffers)
        for name in puzzle.outputs:
            out = case.buffers[name]
            assert expected[name].shape == out.shape
            # the sentinel differs from every expected value, so an unwritten element is caught
            if np.issubdtype(out.dtype, np.floating):
                assert np.isnan(out).all() and np.isfinite(expected[name]).all()
            else:
                assert not np.isin(expected[name], out).any()
    assert (ROOT / "solutions" / puzzle.solution_file).is_file()
    assert (ROOT / "puzzles" / "starters" / puzzle.starter_file).is_file()
    assert list((ROOT / "tests" / "puzzles" / "wrong").glob(puzzle.slug.replace("-", "_") + "__*.py"))


@pytest.mark.parametrize("module, names", [
    (p40, ("TILE",)), (p41, ("TPB", "GROUP")), (p42, ("TPB_X", "ROWS", "K_MAX")), (p43, ("D", "SOFTMAX_TPB")),
    (p44, ("D", "BR", "BC")), (p45, ("D", "PAGE", "TPB")), (p46, ("WARP", "SEQS")), (p47, ("TPB",)),
], ids=[m.PUZZLE.slug for m in MODULES])
def test_solution_constants_match_the_launch(module, names):
    constants = _solution_constants(module)
    for name in names:
        assert constants[name] == getattr(module, name), name


# --- 40 int8-matmul ------------------------------------------------------------------------------------

def test_int8_matmul_worked_example():
    case = _by_name(p40, "worked example 2x2x2")
    got = p40.spec(**case.buffers)["c"]
    np.testing.assert_allclose(got, [[-0.45, 22.0], [1.075, -7.0]], rtol=1e-6)


def test_int8_matmul_cases_overflow_int16_and_cover_edges():
    cases = p40.make_cases()
    extreme = _by_name(p40, "extreme values M=17 K=64 N=20")
    acc = extreme.buffers["a"].astype(np.int64) @ extreme.buffers["b"].astype(np.int64)
    assert np.abs(acc).max() > 2 ** 15 and acc[0, 0] == 64 * 128 * 128
    shapes = [(c.buffers["a"].shape, c.buffers["b"].shape[1]) for c in cases]
    assert any(m == 1 for (m, _), _ in shapes) and any(k == 1 for (_, k), _ in shapes)
    assert any(m % p40.TILE and k % p40.TILE and n % p40.TILE for (m, k), n in shapes)
    for c in cases:
        assert c.buffers["a"].dtype == np.int8 and c.buffers["a"].shape[1] <= p40.K_MAX
        assert c.steps[0].block == (p40.TILE, p40.TILE)


# --- 41 int4-gemv ---------------------------------------------------------------------------------------

def test_int4_packing_is_low_nibble_first():
    assert p41.pack(np.array([[10, 3, 0, 15]])).tolist() == [[0x3A, 0xF0]]
    q = np.random.default_rng(0).integers(0, 16, (3, 32))
    assert (p41.unpack(p41.pack(q)) == q).all()


def test_int4_gemv_worked_example():
    y = p41.spec(w_packed=np.array([[0x3A, 0xF0]], dtype=np.uint8), scales=np.array([[0.5]], np.float32),
                 zeros=np.array([[8]], np.uint8), x=np.array([1, 2, 3, 4], np.float32), y=np.full(1, np.nan))
    np.testing.assert_allclose(y["y"], [-2.0])


def test_int4_gemv_cases():
    ks = [c.buffers["x"].size for c in p41.make_cases()]
    rows = [c.buffers["y"].size for c in p41.make_cases()]
    assert max(ks) == p41.K_MAX and any(k % p41.TPB for k in ks) and min(ks) < p41.TPB and 1 in rows
    assert all(k % p41.GROUP == 0 for k in ks)
    # scales change between groups of a row, so the group index matters
    scales = _by_name(p41, "random 40 rows, K=128").buffers["scales"]
    assert (np.ptp(scales, axis=1) > 0).all()


# --- 42 sparse-24-gemv ----------------------------------------------------------------------------------

def test_sparse24_worked_example():
    values, meta = np.array([[2.0, -1.0, 3.0, 0.5]]), np.array([[13, 8]], dtype=np.uint8)
    assert p42.decompress(values, meta).tolist() == [[0, 2, 0, -1, 3, 0, 0.5, 0]]
    y = p42.spec(values=values, meta=meta, x=np.arange(1, 9, dtype=np.float32), y=np.full(1, np.nan))
    np.testing.assert_allclose(y["y"], [18.5])


def test_sparse24_cases_are_valid_2_4_and_cover_edges():
    seen_pairs = set()
    for case in p42.make_cases():
        meta = case.buffers["meta"]
        i0, i1 = meta & 3, meta >> 2
        assert (i0 < i1).all() and (i1 <= 3).all()
        seen_pairs |= set(zip(i0.ravel().tolist(), i1.ravel().tolist()))
        dense = p42.decompress(case.buffers["values"], meta)
        assert ((dense.reshape(dense.shape[0], -1, 4) != 0).sum(axis=2) == 2).all()
        assert case.buffers["x"].size <= p42.K_MAX
    assert seen_pairs == set(p42.PAIRS)
    rows = [c.buffers["y"].size for c in p42.make_cases()]
    assert any(r % p42.ROWS for r in rows) and 1 in rows


# --- 43 attention ---------------------------------------------------------------------------------------

def test_attention_worked_example():
    got = p43.spec(q=np.array([[1.0, 0.0]]), k=np.array([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
                   v=np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 3.0]]), scale=1.0,
                   scores=None, probs=None, out=None)
    np.testing.assert_allclose(got["scores"], [[2, 0, 1]])
    np.testing.assert_allclose(got["probs"], [[0.6652, 0.0900, 0.2447]], atol=1e-4)
    np.testing.assert_allclose(got["out"], [[1.3994, 0.8242]], atol=1e-4)


def test_attention_large_logits_break_a_naive_softmax():
    case = _by_name(p43, "large logits Sq=8 Sk=24")
    s = p43.spec(**case.buffers)["scores"]
    assert s.max() > 100 and s.min() < -100
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(s)                                          # float32, no max subtracted
        naive = e / e.sum(axis=1, keepdims=True)
    assert np.isnan(naive).all(axis=1).all()
    assert np.isfinite(p43.spec(**case.buffers)["probs"]).all()


def test_attention_cases_fit_the_softmax_block():
    for case in p43.make_cases():
        sq, sk = case.buffers["scores"].shape
        assert sk <= p43.SOFTMAX_TPB and case.steps[1].grid == sq
    assert any(c.buffers["q"].shape[0] != c.buffers["k"].shape[0] for c in p43.make_cases())


# --- 44 flash-attention ---------------------------------------------------------------------------------

def _online(scores: list[list[float]], values: list[list[float]]) -> float:
    """The running-max algorithm of the description, tile by tile, for one query and 1-D values."""
    m, l, acc = -math.inf, 0.0, 0.0
    for s_tile, v_tile in zip(scores, values):
        m_new = max(m, *s_tile)
        corr = math.exp(m - m_new)
        l, acc = l * corr, acc * corr
        for s, v in zip(s_tile, v_tile):
            l += math.exp(s - m_new)
            acc += math.exp(s - m_new) * v
        m = m_new
    return acc / l


def test_flash_attention_worked_example():
    assert _online([[1, 3], [5, 0]], [[10, 20], [30, 40]]) == pytest.approx(28.576, abs=1e-3)
    got = p44.spec(q=np.array([[1.0]]), k=np.array([[1.0], [3.0], [5.0], [0.0]]),
                   v=np.array([[10.0], [20.0], [30.0], [40.0]]), scale=1.0, out=None)["out"]
    assert got[0, 0] == pytest.approx(28.576, abs=1e-3)


def test_flash_attention_rising_case_moves_the_max_in_every_tile():
    case = _by_name(p44, "rising scores Sq=20 Sk=64")
    s = case.buffers["q"].astype(np.float64) @ case.buffers["k"].astype(np.float64).T
    tile_max = s.reshape(s.shape[0], -1, p44.BC).max(axis=2)
    assert (np.diff(tile_max, axis=1) > 0).mean() > 0.9


def test_flash_attention_limits():
    assert p44.ONE_PASS_READS == 32
    full_kv_bytes = 2 * p44.SK_MAX * p44.D * 4
    tiles_bytes = 2 * p44.BC * p44.D * 4
    assert tiles_bytes <= p44.SHARED_BUDGET < full_kv_bytes
    sizes = [(c.buffers["q"].shape[0], c.buffers["k"].shape[0]) for c in p44.make_cases()]
    assert any(sq % p44.BR for sq, _ in sizes) and any(sk % p44.BC for _, sk in sizes)
    assert all("scores" not in c.buffers for c in p44.make_cases())


# --- 45 paged-attention ---------------------------------------------------------------------------------

def test_paged_attention_worked_example():
    k_cache = np.full((5, 2, 2), np.nan)
    v_cache = np.full((5, 2, 2), np.nan)
    k_cache[4] = [[0, 1], [1, 1]]
    v_cache[4] = [[2, 0], [0, 2]]
    k_cache[1, 0], v_cache[1, 0] = [2, 1], [4, 4]
    got = p45.spec(q=np.array([[1.0, 1.0]]), k_cache=k_cache, v_cache=v_cache, block_table=np.array([[4, 1]]),
                   seq_lens=np.array([3]), out=None, scale=1.0)["out"]
    np.testing.assert_allclose(got, [[2.8410, 3.1504]], atol=1e-4)


def test_paged_attention_cases_scatter_pages_and_hide_nan():
    for case in p45.make_cases():
        table, lens = case.buffers["block_table"], case.buffers["seq_lens"]
        assert lens.max() <= p45.TPB and lens.min() >= 1
        for b, n in enumerate(lens):
            pages = (n + p45.PAGE - 1) // p45.PAGE
            assert (table[b, :pages] >= 0).all() and (table[b, pages:] == p45.PAD).all()
            last = table[b, pages - 1]
            assert np.isnan(case.buffers["k_cache"][last, n - (pages - 1) * p45.PAGE:]).all()
    first = p45.make_cases()[0].buffers["block_table"]
    assert (first[:, 0] != np.arange(first.shape[0])).any()          # not the identity mapping
    shared = _by_name(p45, "shared prefix page").buffers["block_table"]
    assert shared[0, 0] == shared[1, 0]


# --- 46 speculative-verify ------------------------------------------------------------------------------

def test_speculative_verify_worked_examples():
    case = _by_name(p46, "worked examples")
    got = p46.spec(**case.buffers)
    assert got["accepted"].tolist() == [2, 2, 0]
    assert got["next_token"].tolist() == [9, 8, 4]


def test_speculative_verify_cases_defeat_the_shortcuts():
    counted_all = ignored_len = 0
    for case in p46.make_cases():
        draft, target, lens = case.buffers["draft"], case.buffers["target"], case.buffers["draft_len"]
        want = p46.spec(**case.buffers)["accepted"]
        for b in range(draft.shape[0]):
            n = lens[b]
            counted_all += int((draft[b, :n] == target[b, :n]).sum() != want[b])
            ignored_len += int(n < draft.shape[1] and draft[b, n] == target[b, n])
    assert counted_all >= 3 and ignored_len >= 3
    full = _by_name(p46, "drafts of 32, a full warp")
    assert full.buffers["draft"].shape[1] == p46.WARP and p46.spec(**full.buffers)["accepted"][0] == 31
    assert any(c.buffers["draft"].shape[0] % p46.SEQS for c in p46.make_cases())


# --- 47 prune-threshold ---------------------------------------------------------------------------------

def test_prune_worked_example():
    case = _by_name(p47, "worked example 2x8")
    got = p47.spec(**case.buffers)
    assert got["kept"].tolist() == [4, 5]
    np.testing.assert_array_equal(got["pruned"][0], np.float32([0.9, 0, 0.5, -0.7, 0, 0, -1.25, 0]))


def test_prune_cases_have_ties_and_ragged_rows():
    for case in p47.make_cases():
        w, t = case.buffers["w"], case.buffers["threshold"]
        assert (np.abs(w) == t).any(), case.name
        assert (w <= -t).any() or w.size < 8, case.name
    cols = [c.buffers["w"].shape[1] for c in p47.make_cases()]
    assert max(cols) == p47.C_MAX and any(c % p47.TPB for c in cols) and 1 in cols
    mixed = p47.spec(**_by_name(p47, "all, none, ties: 3x104").buffers)["kept"]
    assert mixed[0] == 104 and mixed[1] == 0

