"""Chapter 10, puzzles 64-71 (many GPUs): every puzzle complete and consistent, cases valid for any seed, the
specs against numbers worked by hand, bytes per link counted by hand, star rules that bite on correct but
wasteful kernels, and the pipeline schedules' bubbles against hand counts."""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import math
from pathlib import Path

import numpy as np
import pytest

import puzzles.ch10_multigpu as chapter
from puzzles import multidevice
from puzzles.ch10_multigpu import p64_ring_all_reduce as p64
from puzzles.ch10_multigpu import p65_reduce_scatter as p65
from puzzles.ch10_multigpu import p66_all_gather as p66
from puzzles.ch10_multigpu import p67_column_parallel as p67
from puzzles.ch10_multigpu import p68_row_parallel as p68
from puzzles.ch10_multigpu import p69_pipeline_1f1b as p69
from puzzles.ch10_multigpu import p70_ring_attention as p70
from puzzles.ch10_multigpu import p71_expert_all_to_all as p71
from puzzles.ch10_multigpu import schedules
from puzzles.ch10_multigpu.rules import no_peer_stores, optimal_makespan, within_link_budget
from puzzles.checker import case_generator, check_file
from puzzles.model import LaunchStep, RunStats, Sync

ROOT = Path(__file__).resolve().parents[2]
MODULES = (p64, p65, p66, p67, p68, p69, p70, p71)
IDS = [m.PUZZLE.slug for m in MODULES]
# outputs updated in place or accumulated from zero: they start as data, not as a sentinel
NOT_SENTINEL = {"x", "dw", "db"}


def _case(module, prefix: str, rng=None):
    return next(c for c in module.PUZZLE.make_cases(rng) if c.name.startswith(prefix))


def _expected(module, case) -> dict:
    return module.PUZZLE.spec(**copy.deepcopy(dict(case.buffers)))


@functools.cache
def _reference(module):
    """The reference solution's check (cached: several tests read its per-case stats)."""
    return check_file(module.PUZZLE, ROOT / "solutions" / module.PUZZLE.solution_file)


def _stats(module, prefix: str) -> RunStats:
    result = _reference(module)
    return next(c.stats for c in result.cases if c.name.startswith(prefix))


def _constants(path: Path) -> dict[str, object]:
    found: dict[str, object] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = eval(compile(ast.Expression(node.value), str(path), "eval"), {},
                                                 dict(found))
            except Exception:
                pass
    return found


# --- every puzzle -------------------------------------------------------------------------------------------

def test_chapter_package():
    assert chapter.NUMBER == 10 and chapter.TITLE == "Many GPUs"
    for number in range(64, 72):
        assert f"| {number} " in chapter.INTRODUCTION
    assert "**Goes deeper:**" in chapter.INTRODUCTION and "Ultra-Scale Playbook" in chapter.INTRODUCTION


def _check_case_shape(puzzle, case) -> None:
    assert case.devices is not None and 2 <= case.devices.count <= 8
    assert case.devices.topology in ("ring", "switch")
    for name, value in case.buffers.items():
        if isinstance(value, np.ndarray):
            assert value.dtype in (np.float32, np.int32), (name, value.dtype)   # no float64 slipping in
            assert multidevice.device_of(name) is not None, name
            assert multidevice.device_of(name) < case.devices.count, name
    for step in case.steps:
        if isinstance(step, Sync):
            continue
        assert isinstance(step, LaunchStep) and step.kernel in puzzle.kernels
        assert 0 <= step.device < case.devices.count
        assert all(isinstance(a, int) or a in case.buffers for a in step.args)
    expected = puzzle.spec(**copy.deepcopy(dict(case.buffers)))
    names = multidevice.output_names(puzzle, case.buffers)
    assert set(names) == set(expected)
    for name in names:
        start, want = case.buffers[name], expected[name]
        assert want.shape == start.shape and np.isfinite(want).all(), (case.name, name)
        if puzzle.slug == "all-gather":       # in place: row d holds device d's shard, the rest is unset
            d = multidevice.device_of(name)
            np.testing.assert_array_equal(start[d], want[d])
            start = np.delete(start, d, axis=0)
        if multidevice.base_name(name) not in NOT_SENTINEL:
            assert (np.isnan(start) if start.dtype.kind == "f" else start == -7).all(), (case.name, name)


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_puzzle_is_complete(module):
    puzzle = module.PUZZLE
    assert puzzle.chapter == 10 and 64 <= puzzle.number <= 71
    assert f"p{puzzle.number}_" in Path(module.__file__).name
    assert len(puzzle.hints) == 3 and puzzle.reading and puzzle.reading in puzzle.description
    for part in ("**Example", "**What's new:**", "**Launch:**", "**Read more:**", "```"):
        assert part in puzzle.description, part
    cases = puzzle.make_cases()
    assert len(cases) >= 4 and len({c.name for c in cases}) == len(cases)
    assert cases[0].name.startswith("worked example")
    for case in cases:
        _check_case_shape(puzzle, case)
    assert (ROOT / "solutions" / puzzle.solution_file).is_file()
    assert (ROOT / "puzzles" / "starters" / puzzle.starter_file).is_file()
    wrong = list((ROOT / "tests" / "puzzles" / "wrong").glob(puzzle.slug.replace("-", "_") + "__*.py"))
    assert len(wrong) >= 2
    assert no_peer_stores().description in [r.description for r in puzzle.constraints]


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_cases_for_other_seeds_are_valid_and_reproducible(module):
    puzzle = module.PUZZLE
    for seed in (1, 2):
        first, again = puzzle.make_cases(np.random.default_rng(seed)), puzzle.make_cases(np.random.default_rng(seed))
        assert [c.name for c in first] == [c.name for c in again]
        for a, b in zip(first, again):
            assert a.steps == b.steps and a.devices == b.devices
            for name, value in a.buffers.items():
                np.testing.assert_array_equal(value, b.buffers[name])
            _check_case_shape(puzzle, a)
    default, other = puzzle.make_cases(), puzzle.make_cases(np.random.default_rng(1))
    assert [c.name for c in default] != [c.name for c in other] or any(
        not np.array_equal(a.buffers[k], b.buffers[k], equal_nan=True)
        for a, b in zip(default, other) for k in a.buffers if isinstance(a.buffers[k], np.ndarray))
    for name, value in default[0].buffers.items():      # the worked example does not depend on the seed
        np.testing.assert_array_equal(value, other[0].buffers[name])


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_launches_match_the_files_constants(module):
    names = [n for n in ("TPB", "D", "ROWS", "K_MAX", "R_MAX", "TOKENS_MAX", "MAX_MICRO") if hasattr(module, n)]
    puzzle = module.PUZZLE
    for folder, file in (("solutions", puzzle.solution_file), ("puzzles/starters", puzzle.starter_file)):
        consts = _constants(ROOT / folder / file)
        for name in names:
            if name in consts:
                assert consts[name] == getattr(module, name), f"{folder}/{file}: {name}"


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_bench_builds_a_case_like_the_others(module):
    puzzle = module.PUZZLE
    template = puzzle.make_cases()[0]
    if puzzle.bench is None:         # one block by design: the largest valid case, and why
        assert puzzle.bench_max is not None and puzzle.bench_note
        small = puzzle.bench_max()
    else:
        small = puzzle.bench(4096)
    assert {multidevice.base_name(k) for k in small.buffers} == {multidevice.base_name(k) for k in template.buffers}
    assert {s.kernel for s in small.steps if isinstance(s, LaunchStep)} == set(puzzle.kernels)
    _check_case_shape(puzzle, small)

    def size(case):
        return sum(v.size for v in case.buffers.values() if isinstance(v, np.ndarray))

    if puzzle.bench is not None:
        assert size(puzzle.bench(1 << 20)) >= 3 * size(small), "bench(n) should grow with n"
    # a graduate run on two GPUs asks for two ranks
    two = puzzle.bench(4096, ranks=2) if puzzle.bench is not None else puzzle.bench_max(ranks=2)
    assert two.devices.count == 2
    _check_case_shape(puzzle, two)


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_reference_and_starter(module):
    result = _reference(module)
    assert result.passed, [f.message for f in result.failures]
    assert result.stars == result.max_stars, result.next_star
    starter = check_file(module.PUZZLE, ROOT / "puzzles" / "starters" / module.PUZZLE.starter_file)
    assert not starter.passed and any(f.kind == "mismatch" for f in starter.failures)
    assert all(f.kind in ("mismatch", "constraint") for f in starter.failures)


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_reference_passes_with_another_seed(module):
    puzzle = module.PUZZLE
    reseeded = dataclasses.replace(puzzle, make_cases=lambda rng=None: puzzle.make_cases(np.random.default_rng(5)))
    result = check_file(reseeded, ROOT / "solutions" / puzzle.solution_file)
    assert result.passed, [f.message for f in result.failures]
    assert result.stars == result.max_stars, result.next_star


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_the_reference_moves_exactly_its_link_budget(module):
    """The budget each case states is reached, not only respected: it is the algorithm's real traffic."""
    for case in _reference(module).cases:
        assert case.stats.link_bytes == case.stats.ideal_link_bytes, case.name
        assert case.stats.peer_store_bytes == 0


# --- worked examples, by hand ---------------------------------------------------------------------------------

def test_ring_all_reduce_worked_example_and_bytes():
    case = p64.make_cases()[0]
    expected = _expected(p64, case)
    for d in range(3):
        np.testing.assert_array_equal(expected[f"x@{d}"], np.repeat([111, 222, 333], 8).astype(np.float32))
    # each link carries 2 (N - 1) = 4 chunks of 8 float32 = 128 bytes, each chunk one aligned 32-byte sector
    stats = _stats(p64, "worked example")
    assert stats.link_bytes == {"0->1": 128, "1->2": 128, "2->0": 128}
    assert stats.link_sectors == {"0->1": 4, "1->2": 4, "2->0": 4}


def test_ring_all_reduce_moves_two_n_minus_one_over_n_of_the_data():
    data = p64.spread(np.random.default_rng(3), (4, 1024))
    case = p64._case("n=1024", data, "")
    # chunk = 256; each rank receives 2 (N - 1) chunks = 6 x 256 x 4 = 6144 bytes = 2 (N - 1) / N x 4096
    assert case.devices.ideal_link_bytes == {"3->0": 6144, "0->1": 6144, "1->2": 6144, "2->3": 6144}
    assert 6144 == 2 * 3 / 4 * 1024 * 4


def test_ring_all_reduce_sums_each_chunk_in_ring_order():
    rng = np.random.default_rng(8)
    xs = [p64.spread(rng, 40) for _ in range(4)]
    size = p64.chunk_size(40, 4)                     # ceil(40 / 4) = 10 -> 16
    total = p64.ring_sum(xs, size)
    # chunk 1 = elements 16..31, summed from rank 1: ((x1 + x2) + x3) + x0, left to right, in float32
    by_hand = ((xs[1][16:32] + xs[2][16:32]) + xs[3][16:32]) + xs[0][16:32]
    np.testing.assert_array_equal(total[16:32], by_hand)
    assert size == 16 and p64.chunk_len(2, 40, 16) == 8 and p64.chunk_len(3, 40, 16) == 0


def test_reduce_scatter_worked_example_and_bytes():
    expected = _expected(p65, p65.make_cases()[0])
    for d, mean in enumerate((37.0, 74.0, 111.0)):        # (1 + 10 + 100) / 3, (2 + 20 + 200) / 3, ...
        np.testing.assert_array_equal(expected[f"out@{d}"], np.full(8, mean, np.float32))
    # N - 1 = 2 shards of 8 float32 into each rank, from its left
    assert _stats(p65, "worked example").link_bytes == {"0->1": 64, "1->2": 64, "2->0": 64}


def test_reduce_scatter_divides_the_ring_sum_by_n():
    grads = [np.array([0.1, 1e3], np.float32), np.array([1e-3, 7.0], np.float32),
             np.array([3.0, -1e3], np.float32)]
    # shard 0 of 3 ranks (shard size 1 here): (g1 + g2) + g0, then / 3
    expected = np.float32((np.float32(1e-3) + np.float32(3.0)) + np.float32(0.1)) / np.float32(3)
    assert p65.ring_mean([np.array([g[0]]) for g in grads], 1, 0)[0] == expected


def test_all_gather_worked_example_and_both_directions():
    case = p66.make_cases()[0]
    expected = _expected(p66, case)
    want = np.repeat(np.array([[1, 10], [2, 20], [3, 30], [4, 40]], np.float32), 8, axis=1)
    for d in range(4):
        np.testing.assert_array_equal(expected[f"out@{d}"], want)
    # every one of the 8 directed links carries N - 1 = 3 half-shards of 8 float32 = 96 bytes
    stats = _stats(p66, "worked example")
    assert len(stats.link_bytes) == 8 and set(stats.link_bytes.values()) == {96}
    assert p66.link_budget(2, 48) == {"1->0": 192, "0->1": 192}     # two ranks: both halves on one link


def test_column_parallel_worked_example_and_bytes():
    expected = _expected(p67, p67.make_cases()[0])

    def gelu(z):
        return 0.5 * z * (1 + math.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))

    # X a@0 = [1*1 + 2*0.5, 3*1 + 4*0.5] = [2, 5];  X a@1 = [1*-1 + 2*2, 3*-1 + 4*2] = [3, 5]
    np.testing.assert_allclose(expected["y@0"][:, 0], [gelu(2.0), gelu(5.0)], rtol=1e-6)
    np.testing.assert_allclose(expected["y@1"][:, 0], [gelu(3.0), gelu(5.0)], rtol=1e-6)
    assert abs(gelu(2.0) - 1.9546) < 1e-4 and abs(gelu(3.0) - 2.9964) < 1e-4
    # each device reads the other's one row of 2 float32 once: 8 bytes each way
    assert _stats(p67, "worked example").link_bytes == {"0->1": 8, "1->0": 8}


def test_row_parallel_worked_example_and_bytes():
    expected = _expected(p68, p68.make_cases()[0])
    np.testing.assert_array_equal(expected["z@0"], [[31.5, 62.5]])
    np.testing.assert_array_equal(expected["z@1"], [[42.5, 84.5]])
    # device d reads one partial row of 2 float32 from the other: 8 bytes each way
    assert _stats(p68, "worked example").link_bytes == {"0->1": 8, "1->0": 8}


def test_ring_attention_worked_example_and_bytes():
    expected = _expected(p70, p70.make_cases()[0])
    e = math.e
    np.testing.assert_allclose(expected["out@0"], (10 * e + 20 * e ** 2) / (e + e ** 2), rtol=1e-6)   # 17.311
    np.testing.assert_allclose(expected["out@1"], (10 * e ** 2 + 20 * e ** 4) / (e ** 2 + e ** 4), rtol=1e-6)
    assert abs((10 * e + 20 * e ** 2) / (e + e ** 2) - 17.311) < 1e-3
    # N - 1 = 1 block of keys and values (2 x 1 x 16 float32 = 128 bytes) over each link, from the left
    assert _stats(p70, "worked example").link_bytes == {"0->1": 128, "1->0": 128}


def test_expert_all_to_all_worked_example_and_bytes():
    case = p71.make_cases()[0]
    expected = _expected(p71, case)
    np.testing.assert_array_equal(expected["out@0"][:, 0], [101, 4, 103, 0])
    np.testing.assert_array_equal(expected["out@1"][:, 0], [20, 40, 130, 0])
    # link 0 -> 1: the count (4 bytes) + 2 tokens expert 1 takes from device 0 (2 x 16 x 4) + 2 results of
    # device 1's tokens from expert 0 (2 x 64) = 260; link 1 -> 0 the same by symmetry of the example
    assert _stats(p71, "worked example").link_bytes == {"0->1": 260, "1->0": 260}
    np.testing.assert_array_equal(p71.kept_slots(np.array([1, 0, 1, 1]), 2, 2), [0, 0, 1, -1])


def test_expert_all_to_all_cases_drop_tokens():
    case = _case(p71, "4 devices T=64 C=8 skewed")
    dropped = sum(np.count_nonzero(p71.kept_slots(case.buffers[f"expert@{d}"], 4, 8) < 0) for d in range(4))
    assert dropped > 0


# --- the pipeline ---------------------------------------------------------------------------------------------

def test_pipeline_schedules_and_their_bubbles_by_hand():
    one = schedules.one_f_one_b(3, 4)
    # the description's table: stage 0 runs F0 F1 F2 at ticks 0-2, B0 at 5, F3 at 6, B1 7, B2 9, B3 11
    assert list(one[0]) == [1, 2, 3, 0, 0, -1, 4, -2, 0, -3, 0, -4]
    assert list(one[2]) == [0, 0, 1, -1, 2, -2, 3, -3, 4, -4, 0, 0]
    # 12 ticks, 3 stages, 8 ops each: 36 - 24 = 12 idle stage-ticks, a bubble of 1/3 = (P - 1) / (M + P - 1)
    assert schedules.makespan(one) == 12 and np.count_nonzero(one) == 24
    assert schedules.bubble(one) == pytest.approx(1 / 3)
    gpipe = schedules.gpipe(3, 4)
    assert schedules.bubble(gpipe) == pytest.approx(1 / 3)
    assert schedules.in_flight(one) == [3, 2, 1] and schedules.in_flight(gpipe) == [4, 4, 4]
    seq = schedules.sequential(3, 4)
    assert schedules.makespan(seq) == 24 and schedules.bubble(seq) == pytest.approx(2 / 3)
    for table in (one, gpipe, seq):
        assert schedules.problems(table, 4) == []
    broken = one.copy()
    broken[1] = np.roll(broken[1], -1)        # stage 1 one tick early: F0 in the same tick as stage 0's
    assert any("before stage 0" in p for p in schedules.problems(broken, 4))


def test_pipeline_spec_against_a_loop_over_micro_batches():
    case = p69.make_cases()[0]
    b = case.buffers
    expected = _expected(p69, case)
    micro, stages = b["x@0"].shape[0], 3
    dw = [np.zeros(8) for _ in range(stages)]
    for m in range(micro):
        hs = [b["x@0"][m].astype(np.float64)]
        for p in range(stages):
            hs.append(b[f"w@{p}"] * hs[p] + b[f"b@{p}"])
        g = hs[-1] - b["target@2"][m]
        for p in (2, 1, 0):
            dw[p] += g * hs[p]
            g = g * b[f"w@{p}"]
        np.testing.assert_allclose(expected["dx@0"][m], g, rtol=1e-6)
        np.testing.assert_allclose(expected["out@2"][m], hs[-1], rtol=1e-6)
    for p in range(stages):
        np.testing.assert_allclose(expected[f"dw@{p}"], dw[p], rtol=1e-5)


def test_pipeline_stash_cannot_be_skipped(tmp_path):
    """GPipe with the backward re-reading the stage's input over the link instead of its stash: the
    two-slot transit buffer has moved on (wrong gradients) and the link carries the activation twice."""
    source = (ROOT / "tests/puzzles/wrong/pipeline_1f1b__gpipe.py").read_text()
    cheat = source.replace("        h = stash[m % stash.shape[0], i]\n", "        h = prev[m % prev.shape[0], i]\n")
    assert cheat != source
    path = tmp_path / "cheat.py"
    path.write_text(cheat)
    result = check_file(p69.PUZZLE, path)
    kinds = {f.kind for f in result.failures}
    assert not result.passed and {"mismatch", "constraint"} <= kinds


def test_pipeline_run_has_the_bubble_of_its_schedule():
    stats = _stats(p69, "P=4 M=8")
    busy = [(r, d) for r, d, kernel, wrote in stats.device_launches if kernel == "pipeline_tick" and wrote]
    rounds = [r for r, _ in busy]
    span = max(rounds) - min(rounds) + 1
    # 1F1B with P = 4, M = 8: 2 (M + P - 1) = 22 ticks, 2 M P = 64 busy stage-ticks, bubble 3/11
    assert span == 22 == stats.ideal_rounds and len(busy) == 64
    assert 1 - len(busy) / (4 * span) == pytest.approx(3 / 11)
    # one activation and one gradient row (D float32) per micro-batch over each link, each way
    features = _case(p69, "P=4 M=8", case_generator(_reference(p69).seed)).buffers["w@0"].size
    assert stats.link_bytes["0->1"] == 8 * features * 4 == stats.link_bytes["3->2"]


# --- rules, and correct kernels that waste something ---------------------------------------------------------

def _stats_with(**fields) -> RunStats:
    base = RunStats(0, 0, {}, {}, 0, False, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0)
    return dataclasses.replace(base, **fields)


def test_chapter_rules_bite():
    budget = within_link_budget("the ring")
    assert budget.check(_stats_with(link_bytes={"0->1": 8}, ideal_link_bytes={"0->1": 8})) is None
    assert "16 bytes where the ring needs 8" in budget.check(
        _stats_with(link_bytes={"0->1": 16}, ideal_link_bytes={"0->1": 8}))
    assert "0->2" in budget.check(_stats_with(link_bytes={"0->2": 4}, ideal_link_bytes={"0->1": 8}))
    assert budget.check(_stats_with()) is not None                          # no budget: not judged
    assert no_peer_stores().check(_stats_with(peer_store_bytes=4)) is not None
    assert no_peer_stores().check(_stats_with()) is None
    span = optimal_makespan("tick")
    log = tuple((r, d, "tick", r % 2 == d % 2) for r in range(1, 7) for d in range(2))
    assert span.check(_stats_with(device_launches=log, ideal_rounds=6)) is None
    assert "6 ticks where 4 are enough" in span.check(_stats_with(device_launches=log, ideal_rounds=4))


def _variant(module, tmp_path: Path, *pairs) -> Path:
    source = (ROOT / "solutions" / module.PUZZLE.solution_file).read_text()
    for old, new in pairs:
        assert old in source, old
        source = source.replace(old, new)
    path = tmp_path / "variant.py"
    path.write_text(source)
    return path


VARIANTS = {
    # skips the add where the neighbour's value is zero: that test reads it over the link a second time
    "ring-all-reduce": (p64, 1, "link", ("        x[i] += left[i]",
                                         "        if left[i] != 0:\n            x[i] += left[i]")),
    # a one-way ring all-gather: right, but every clockwise link carries twice as much and the others nothing
    "all-gather": (p66, 1, "link", ("    if j < shard // 2:\n", "    if True:\n")),
    # no shared tile: every thread reads its row of the peer's x itself, C times over the link
    "column-parallel": (p67, 1, "link", ("            z += xs[t, k] * a[k, c]",
                                         "            z += x_part[r, k] * a[k, c]")),
    # runs the micro-batches one after another: correct, with twice the ticks
    "pipeline-1f1b": (p69, 1, "ticks", ("        if m < stages - stage:\n            forward = stage + m\n"
                                        "        else:\n            forward = 2 * m + stage\n"
                                        "        sched[forward] = m + 1\n"
                                        "        sched[2 * stages - 1 - stage + 2 * m] = -(m + 1)\n",
                                        "        sched[2 * stages * m + stage] = m + 1\n"
                                        "        sched[2 * stages * m + 2 * stages - 1 - stage] = -(m + 1)\n")),
    # passes the block feature-major: the same bytes, uncoalesced
    "ring-attention": (p70, 2, "coalesced", ("        r = e // D % rows\n        c = e % D\n",
                                             "        r = e % rows\n        c = e // rows % D\n")),
    # sends the whole capacity, padding included
    "expert-all-to-all": (p71, 1, "link", ("    if j < counts_in[src]:\n", "    if j < send_src.shape[1]:\n")),
}


@pytest.mark.parametrize("slug", list(VARIANTS))
def test_correct_but_wasteful_kernels_lose_stars(slug, tmp_path):
    module, stars, missing, pair = VARIANTS[slug]
    result = check_file(module.PUZZLE, _variant(module, tmp_path, pair))
    assert result.passed, [f.message for f in result.failures]
    assert result.stars == stars, (result.stars, result.next_star)
    assert missing in result.next_star


def test_a_race_between_devices_names_both_devices(tmp_path):
    wrong = ROOT / "tests" / "puzzles" / "wrong" / "reduce_scatter__one_slot.py"
    result = check_file(p65.PUZZLE, wrong)
    fault = next(f for f in result.failures if f.kind == "fault")
    assert fault.detail["between_devices"] and fault.detail["faults"][0] == "DataRace"
    assert fault.fault.device != fault.fault.other_device
    assert "with no synchronisation between the two launches" in fault.message
    assert fault.message.startswith(f"on device {fault.detail['device']}:")


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_reference_passes_its_benchmark_cases(module):
    """The graduate benchmark cases (the default device count, and two GPUs) are valid cases the reference
    passes, judged as the checker judges."""
    puzzle = module.PUZZLE
    make = puzzle.bench if puzzle.bench is not None else (lambda n, ranks=8: puzzle.bench_max(ranks=ranks))
    cases = (make(4096), make(4096, ranks=2))
    benched = dataclasses.replace(puzzle, make_cases=lambda rng=None: cases)
    result = check_file(benched, ROOT / "solutions" / puzzle.solution_file)
    assert result.passed, [f.message for f in result.failures]
