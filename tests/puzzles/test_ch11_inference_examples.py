"""Chapter 11, puzzle by puzzle: each spec against a computation by hand (or by a slower, obviously-correct
route) on the worked example of its description, the cases against the edge cases their notes promise, and
exact counts of sectors, requests, bank conflicts and shared loads against counts derived here."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import gpusim
from puzzles import workspace
from puzzles.ch11_inference import p72_kv_cache_append as p72
from puzzles.ch11_inference import p73_kv_cache_int8 as p73
from puzzles.ch11_inference import p74_flash_decoding as p74
from puzzles.ch11_inference import p75_continuous_batching as p75
from puzzles.ch11_inference import p76_top_k_sampling as p76
from puzzles.ch11_inference import p77_top_p_sampling as p77
from puzzles.ch11_inference import p78_llm_int8 as p78
from puzzles.ch11_inference import p79_speculative_sampling as p79
from puzzles.ch11_inference import p80_distillation_kl as p80
from puzzles.ch11_inference.sampling import MARGIN
from puzzles.loader import load_solution
from puzzles.rules import SHARED_LD

LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
ST_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"


def _by_name(module, name: str):
    return next(c for c in module.make_cases() if c.name.startswith(name))


def _run(module, case, path=None):
    """Run a case's launches through gpusim; return (buffers after, summed metrics, last report)."""
    solution = load_solution(path or workspace.reference_path(module.PUZZLE), module.PUZZLE.kernels)
    buffers = copy.deepcopy(dict(case.buffers))
    metrics: dict[str, float] = {}
    report = None
    for step in case.steps:
        report = gpusim.launch(solution.kernels[step.kernel], step.grid, step.block,
                               [buffers[a] for a in step.args], step.shared_mem)
        assert not report.faults, report.faults
        for key, value in report.metrics.items():
            metrics[key] = metrics.get(key, 0) + value
    return buffers, metrics, report


# --- 72 kv-cache-append -----------------------------------------------------------------------------------

def test_kv_append_worked_example_writes_exactly_the_two_tokens():
    case = _by_name(p72, "worked example")
    got = p72.spec(**case.buffers)
    k_new, before = case.buffers["k_new"], case.buffers["k_cache"]
    np.testing.assert_array_equal(got["k_cache"][2, :, 5, :], k_new[0])      # slot 37 = page 2, offset 5
    np.testing.assert_array_equal(got["k_cache"][0, :, 2, :], k_new[1])      # slot 2 = page 0, offset 2
    changed = ~np.isclose(got["k_cache"], before, equal_nan=True)
    assert changed.sum() == 2 * p72.H * p72.D                                # the padding token wrote nothing


def test_kv_append_cases_cover_padding_and_page_edges():
    offsets = set()
    for case in p72.make_cases():
        slots = case.buffers["slot_mapping"]
        offsets |= set((slots[slots >= 0] % p72.PAGE).tolist())
    assert {0, p72.PAGE - 1} <= offsets
    assert (_by_name(p72, "only padding").buffers["slot_mapping"] == p72.PAD_SLOT).all()
    edge = _by_name(p72, "first and last slot").buffers
    assert edge["slot_mapping"].max() == edge["k_cache"].shape[0] * p72.PAGE - 1     # the last slot of all


def test_kv_append_sectors_by_hand():
    # Per block (token) 4 warps, one per head. Each warp: slot_mapping[token] is one address -> 1 sector;
    # a valid token's warp then reads 32 contiguous floats of k_new and of v_new (128 bytes, 128-byte
    # aligned: 4 sectors each) and writes 32 contiguous floats into each cache (also 128-byte aligned).
    case = _by_name(p72, "prefill")
    slots = case.buffers["slot_mapping"]
    valid, padding = int((slots >= 0).sum()), int((slots < 0).sum())
    _, m, _ = _run(p72, case)
    assert m[LD_SECTORS] == valid * 4 * (1 + 4 + 4) + padding * 4 * 1
    assert m[ST_SECTORS] == valid * 4 * (4 + 4)
    assert m[LD_REQUESTS] == valid * 4 * 3 + padding * 4


# --- 73 kv-cache-int8 -------------------------------------------------------------------------------------

def test_int8_kv_worked_example():
    x = np.zeros(p73.D, np.float32)
    x[:4] = [0.5, -2.54, 1.0, 0.02]
    q, scale = p73.quantize(x[None, :])
    assert q[0, :4].tolist() == [25, -127, 50, 1] and (q[0, 4:] == 0).all()
    assert scale[0] == pytest.approx(0.02, rel=1e-6)
    case = _by_name(p73, "worked example")
    got = p73.spec(**case.buffers)
    assert got["k_cache"][2, 3, 5, :4].tolist() == [25, -127, 50, 1]          # slot 37, every head
    assert got["v_cache"][2, 0, 5, :4].tolist() == [-25, 127, -50, -1]        # v_new = -k_new


def test_int8_kv_rounds_halves_to_even_and_handles_a_zero_head():
    case = _by_name(p73, "zero head")
    got = p73.spec(**case.buffers)
    page, offset = divmod(p73.PAGE - 1, p73.PAGE)
    assert got["k_scale"][page, 0, offset] == 0 and (got["k_cache"][page, 0, offset] == 0).all()
    halves = case.buffers["k_new"][0, 3]
    assert got["k_scale"][page, 3, offset] == 1.0
    exact_halves = halves[1:][np.abs(halves[1:] % 1) == 0.5]
    assert exact_halves.size >= 8
    q = got["k_cache"][page, 3, offset, 1:][np.abs(halves[1:] % 1) == 0.5]
    assert (q % 2 == 0).all()                                                  # 2.5 -> 2, -3.5 -> -4, ...
    assert (q != np.floor(exact_halves + 0.5)).any()                          # round-half-up would differ


def test_int8_kv_sectors_by_hand():
    # Loads as in puzzle 72: 1 + 4 + 4 sectors per warp of a valid token. Stores per warp: 32 int8 values
    # of k and of v (32 bytes, 32-byte aligned: 1 sector each) and lane 0's two 4-byte scales (1 sector
    # each): 4 sectors, half of the float32 cache's 8.
    case = _by_name(p73, "prefill of 20")
    _, m, _ = _run(p73, case)
    tokens = case.buffers["slot_mapping"].size
    assert m[LD_SECTORS] == tokens * 4 * 9
    assert m[ST_SECTORS] == tokens * 4 * 4


# --- 74 flash-decoding ------------------------------------------------------------------------------------

def _merge(pieces):
    """The description's merge of (m, l, acc) pieces, written out for 1-D values."""
    big = max(m for m, _, _ in pieces)
    l = sum(l * math.exp(m - big) for m, l, _ in pieces)
    acc = sum(a * math.exp(m - big) for m, _, a in pieces)
    return acc / l


def test_flash_decoding_worked_example():
    def piece(scores, values):
        m = max(scores)
        return m, sum(math.exp(s - m) for s in scores), sum(math.exp(s - m) * v for s, v in zip(scores, values))

    a, b = piece([1, 3], [10, 20]), piece([5, 0], [30, 40])
    assert a[1] == pytest.approx(1.1353, abs=1e-4) and a[2] == pytest.approx(21.353, abs=1e-3)
    assert b[1] == pytest.approx(1.0067, abs=1e-4) and b[2] == pytest.approx(30.270, abs=1e-3)
    assert _merge([a, b]) == pytest.approx(28.576, abs=1e-3)
    q = np.zeros((1, p74.D), np.float32)
    q[0, 0] = 1
    k = np.zeros((1, p74.L_MAX, p74.D), np.float32)
    v = np.zeros((1, p74.L_MAX, p74.D), np.float32)
    k[0, :4, 0] = [1, 3, 5, 0]
    v[0, :4, 0] = [10, 20, 30, 40]
    got = p74.spec(q=q, k_cache=k, v_cache=v, lens=np.array([4]), scale=1.0, m_part=None, l_part=None,
                   acc_part=None, out=np.zeros((1, p74.D)))["out"]
    assert got[0, 0] == pytest.approx(28.576, abs=1e-3)


def test_flash_decoding_cases():
    lens = _by_name(p74, "ragged").buffers["lens"].tolist()
    assert p74.L_MAX in lens and 1 in lens and p74.CHUNK in lens and any(n % p74.CHUNK for n in lens)
    rising = _by_name(p74, "rising").buffers
    for r, n in enumerate(rising["lens"]):
        s = rising["k_cache"][r, :n] @ rising["q"][r]
        chunk_max = [s[i:i + p74.CHUNK].max() for i in range(0, n, p74.CHUNK)]
        assert (np.diff(chunk_max) > 0).mean() >= 0.75
    large = _by_name(p74, "large").buffers
    assert max(np.abs(large["k_cache"][r, :n] @ large["q"][r] * large["scale"]).max()
               for r, n in enumerate(large["lens"])) > 100
    for case in p74.make_cases():                       # the cache past each row's length is NaN
        for r, n in enumerate(case.buffers["lens"]):
            assert np.isnan(case.buffers["k_cache"][r, n:]).all()


def test_flash_decoding_bank_conflicts_by_hand(tmp_path):
    # Without padding, thread t reads k_tile[t, c]: 32 floats apart, so all lanes of a warp hit bank c.
    # Case "one row, one chunk" (37 keys, one busy block): warp 0 has 32 active lanes -> 32 wavefronts,
    # 31 conflicts per read; warp 1 has lanes 32..36 -> 5 wavefronts, 4 conflicts; 32 reads (c = 0..31)
    # each: 32 * 31 + 32 * 4 = 1120. Every other shared access is conflict-free (rows stored and read
    # whole, broadcasts of red[0] and p[j]); with the padded tile, bank (t + c) % 32: none at all.
    case = _by_name(p74, "one row")
    _, padded, _ = _run(p74, case)
    assert padded[LD_CONFLICTS] == 0 and padded[ST_CONFLICTS] == 0
    source = workspace.reference_path(p74.PUZZLE).read_text().replace("PADDED = D + 1", "PADDED = D")
    path = tmp_path / "unpadded.py"
    path.write_text(source)
    _, unpadded, _ = _run(p74, case, path)
    assert unpadded[LD_CONFLICTS] == 32 * 31 + 32 * 4 and unpadded[ST_CONFLICTS] == 0


# --- 75 continuous-batching -------------------------------------------------------------------------------

def test_continuous_batching_worked_example():
    case = _by_name(p75, "worked example")
    b = case.buffers
    assert b["cu_q"].tolist() == [0, 3, 4, 6] and b["cu_k"].tolist() == [0, 3, 8, 12]
    got = p75.spec(**b)["out"]

    def attend(i, keys):
        s = np.array([float(np.dot(b["q"][i], b["k"][j])) * float(b["scale"]) for j in keys])
        w = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        return sum(wj * b["v"][j].astype(np.float64) for wj, j in zip(w, keys))

    np.testing.assert_allclose(got[1], attend(1, [0, 1]), rtol=1e-5)           # prefill token j = 1
    np.testing.assert_allclose(got[3], attend(3, range(3, 8)), rtol=1e-5)      # decode: the whole cache
    np.testing.assert_allclose(got[4], attend(4, [8, 9, 10]), rtol=1e-5)       # chunked prefill, j = 0
    np.testing.assert_allclose(got[5], attend(5, [8, 9, 10, 11]), rtol=1e-5)


def test_continuous_batching_cases():
    mixed = _by_name(p75, f"{p75.B_MAX} sequences").buffers
    nq, nk = np.diff(mixed["cu_q"]), np.diff(mixed["cu_k"])
    assert nq.size == p75.B_MAX and (nq == 1).any() and ((nq == nk) & (nq > 1)).any() and ((nq > 1) & (nk > nq)).any()
    straddle = _by_name(p75, "one long prefill").buffers["cu_q"]
    assert straddle[1] < p75.TPB < straddle[2]
    assert p75.SEARCH_READS == 8


def test_continuous_batching_search_reads_by_hand():
    # The search keeps cu_q[lo] <= i < cu_q[hi] and halves hi - lo from B = 40 while it exceeds 1: a path
    # takes floor(log2 40) = 5 or ceil(log2 40) = 6 steps, one read of cu_q each (the ends are remembered).
    case = _by_name(p75, f"{p75.B_MAX} sequences")
    _, _, report = _run(p75, case)
    reads = report.counts.reads_per_thread("global", "cu_q")
    tokens = int(case.buffers["cu_q"][-1])
    assert reads[:tokens].max() == 6 and reads[:tokens].min() == 5
    assert report.counts.reads_per_thread("global", "cu_k")[:tokens].max() == 2


# --- 76 top-k-sampling ------------------------------------------------------------------------------------

def test_top_k_worked_example():
    row = np.float32(p76.EXAMPLE_LOGITS)
    assert p76.sort_order(row).tolist() == [1, 3, 2, 0, 5, 7, 4, 6]
    w = [1.0, 1.0, math.exp(-1)]
    c = np.cumsum(w)
    assert 0.6 * c[-1] == pytest.approx(1.421, abs=1e-3) and int(np.argmax(c > 0.6 * c[-1])) == 1
    got = p76.spec(**_by_name(p76, "worked example").buffers)
    assert got["topk_ids"][0, :4].tolist() == [1, 3, 2, -1] and got["token"][0] == 3
    assert got["topk_ids"][1, :2].tolist() == [1, -1] and got["token"][1] == 1    # k = 1: greedy


def test_top_k_ties_straddle_k():
    case = _by_name(p76, "ties")
    logits, ks = case.buffers["logits"], case.buffers["top_k"]
    cut = 0
    for row, k in zip(logits, ks):
        order = p76.sort_order(row)
        cut += k < row.size and row[order[k - 1]] == row[order[k]]
    assert cut >= 2, "some rows must cut a run of equal logits: only the tie rule decides which ids stay"


def test_top_k_shared_loads_by_hand():
    # Bitonic sort of 1024 slots: log2(1024) * (log2(1024) + 1) / 2 = 55 steps; in each, all 16 warps
    # load vals[i], vals[j], ids[i], ids[j]: 55 * 16 * 4 = 3,520. Sampling: warp 0 loads vals[t],
    # vals[0] and ids[t] (lanes t < k), and lane 0 ids[pick]: 4 more. Eight rows.
    _, m, _ = _run(p76, _by_name(p76, "worked example"))
    assert p76.BITONIC_LOADS == 55 * 16 * 4
    assert m[SHARED_LD] == p76.ROWS * (55 * 16 * 4 + 4)


# --- 77 top-p-sampling ------------------------------------------------------------------------------------

def _nucleus_by_sorting(row, temperature, top_p):
    """The nucleus the slow way: sort, walk until the mass reaches top_p, then add every tie."""
    w = [math.exp((float(x) - float(row.max())) / temperature) for x in row]
    order = sorted(range(row.size), key=lambda i: (-float(row[i]), i))
    total, run = sum(w), 0.0
    for i in order:
        run += w[i]
        if run >= top_p * total:
            return [j for j in range(row.size) if row[j] >= row[i]], w
    raise AssertionError


def test_top_p_worked_example():
    row = np.float32(p77.EXAMPLE_LOGITS)
    probs = np.exp(row - row.max()) / np.exp(row - row.max()).sum()
    np.testing.assert_allclose(probs, [.171, .063, .464, .038, .063, .008, .171, .023], atol=6e-4)
    kept, w = _nucleus_by_sorting(row, 1.0, 0.85)
    assert kept == [0, 1, 2, 4, 6]
    mass = sum(w[i] for i in kept) / sum(w)
    assert mass == pytest.approx(0.930, abs=1e-3) and 0.8 * mass == pytest.approx(0.744, abs=1e-3)
    got = p77.spec(**_by_name(p77, "worked example").buffers)
    assert got["token"].tolist() == [4, 2, 0, 6] and got["kept"].tolist() == [5, 1, 3, 6]


def test_top_p_cases_match_the_slow_nucleus_and_keep_their_margins():
    for case in p77.make_cases():
        b = case.buffers
        assert (b["logit_bits"] == b["logits"].view(np.int32)).all()
        for row, t, p in zip(b["logits"], b["temperature"], b["top_p"]):
            kept, w = _nucleus_by_sorting(row, float(t), float(p))
            assert np.flatnonzero(p77.nucleus(row, t, p)).tolist() == kept
            values = np.unique(row)[::-1]                          # runs of equal logits, largest first
            run_ends = np.cumsum([sum(w[i] for i in np.flatnonzero(row == v)) for v in values]) / sum(w)
            assert np.abs(run_ends - p).min() > MARGIN, case.name    # only a run's end can move tau


def test_top_p_cases_have_ties_at_the_boundary_and_negative_rows():
    ties = _by_name(p77, "ties").buffers
    for row, t, p in zip(ties["logits"], ties["temperature"], ties["top_p"]):
        kept, _ = _nucleus_by_sorting(row, float(t), float(p))
        assert (row == row[kept].min()).sum() >= 2                     # the boundary run has 2+ tokens
    assert (_by_name(p77, "negative").buffers["logits"] < 0).all()


# --- 78 llm-int8 ------------------------------------------------------------------------------------------

def test_llm_int8_worked_example():
    got = p78.spec(**_by_name(p78, "worked example").buffers)
    assert got["outlier"].tolist() == [0, 1, 0, 0]
    assert got["x_q"].tolist() == [[38, 0, 127, 25], [-127, 0, -76, 102]]
    np.testing.assert_allclose(got["x_scale"], [1 / 127, 1 / 127], rtol=1e-6)
    # integer sums: row 0 . columns = -209, 256; row 1 = 486, 1932. Float part: x[:, 1] * w_q[1, :]
    want = [[-209 / 127 * 0.01 - 8 * 5 * 0.01, 256 / 127 * 0.02 - 8 * 3 * 0.02],
            [486 / 127 * 0.01 + 2 * 5 * 0.01, 1932 / 127 * 0.02 + 2 * 3 * 0.02]]
    np.testing.assert_allclose(got["y"], want, rtol=1e-6)
    assert got["y"][0, 0] == pytest.approx(-0.41646, abs=1e-5)


def test_llm_int8_cases():
    edge = _by_name(p78, "threshold").buffers["x"]
    flags = p78.spec(**_by_name(p78, "threshold").buffers)["outlier"]
    assert np.abs(edge[:, 7]).max() == p78.THRESHOLD and flags[7] == 1
    assert np.abs(edge[:, 8]).max() < p78.THRESHOLD and flags[8] == 0
    assert p78.spec(**_by_name(p78, "threshold").buffers)["x_scale"][6] == 0
    extreme = _by_name(p78, "extreme").buffers
    acc = p78.decompose(extreme["x"])[2].astype(np.int64) @ extreme["w_q"].astype(np.int64)
    assert np.abs(acc).max() == 128 * 127 * 127 > 2 ** 15
    big = _by_name(p78, "random").buffers
    rest_scale = p78.spec(**big)["x_scale"]
    naive_scale = np.abs(big["x"]).max(axis=1) / 127
    assert (naive_scale > 2 * rest_scale).sum() >= 5                  # outliers would wreck those rows
    assert not p78.spec(**_by_name(p78, "no outliers").buffers)["outlier"].any()


# --- 79 speculative-sampling ------------------------------------------------------------------------------

def test_speculative_sampling_worked_example():
    case = _by_name(p79, "worked example")
    got = p79.spec(**case.buffers)
    assert got["accepted"].tolist() == [1, 3, 0] and got["next_token"].tolist() == [2, 3, 0]
    p, q = case.buffers["p_probs"][0, 1], case.buffers["q_probs"][0, 1]
    np.testing.assert_allclose(p79.residual(p, q), [0, 0.2, 0.2, 0.1], atol=1e-7)
    assert 0.5 / 0.6 == pytest.approx(0.833, abs=1e-3) and 0.2 / 0.7 == pytest.approx(0.286, abs=1e-3)


def test_speculative_sampling_cases_keep_margins_and_cover_every_length():
    seen = set()
    for case in p79.make_cases():
        b = case.buffers
        got = p79.spec(**b)["accepted"]
        seen |= set(got.tolist())
        g = b["draft"].shape[1]
        for s in range(got.size):
            for i in range(min(int(got[s]) + 1, g)):               # every test that counts
                x = b["draft"][s, i]
                ratio = float(b["p_probs"][s, i, x]) / float(b["q_probs"][s, i, x])
                assert abs(b["u_accept"][s, i] - min(1.0, ratio)) > MARGIN or ratio >= 1, case.name
    assert set(range(p79.G_MAX + 1)) <= seen
    after = _by_name(p79, "after a rejection").buffers
    assert any(p79.spec(**after)["accepted"][s] < after["draft"].shape[1] - 1 for s in range(5))


# --- 80 distillation-kl -----------------------------------------------------------------------------------

def _kl_by_hand(student, teacher, t):
    def log_softmax(xs):
        m = max(xs)
        z = sum(math.exp(x - m) for x in xs)
        return [x - m - math.log(z) for x in xs]

    ls = log_softmax([x / t for x in student])
    lt = log_softmax([x / t for x in teacher])
    kl = sum(math.exp(b) * (b - a) for a, b in zip(ls, lt))
    return t * t * kl, [t * (math.exp(a) - math.exp(b)) for a, b in zip(ls, lt)]


def test_distillation_worked_example():
    loss, grad = _kl_by_hand([1, 2, 0, -1], [2, 1, 0, -2], 2.0)
    assert loss == pytest.approx(0.4078, abs=1e-4)
    np.testing.assert_allclose(grad, [-0.3960, 0.3351, -0.0139, 0.0748], atol=1e-4)
    got = p80.spec(**_by_name(p80, "worked example").buffers)
    assert got["loss"][0] == pytest.approx(loss, rel=1e-6) and got["loss"][1] == 0
    np.testing.assert_allclose(got["grad"][0], grad, rtol=1e-6)
    assert (got["grad"][1] == 0).all()


def test_distillation_cases_underflow_and_scale():
    under = _by_name(p80, "T=1").buffers
    pt = np.exp(p80.log_softmax(under["teacher"] / under["temperature"]))
    assert (pt.astype(np.float32) == 0).sum(axis=1).min() >= 400                 # log(p_t) would be -inf
    temps = [float(c.buffers["temperature"]) for c in p80.make_cases()]
    assert 1.0 in temps and 4.0 in temps and min(temps) < 1
    large = _by_name(p80, "large").buffers
    assert (large["student"] / large["temperature"]).max() > 100                 # exp overflows without the max
