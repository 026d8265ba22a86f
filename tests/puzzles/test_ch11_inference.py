"""Chapter 11 (inference engineering) as a whole: every puzzle is complete and consistent, its cases are
valid for any seed, its launches match the constants of the starter and the reference, bench(n) builds a
valid case, and each star tier and the chapter's own rule tell a good kernel from a correct-but-wasteful one."""

from __future__ import annotations

import ast
import copy
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import gpusim
import puzzles.ch11_inference as chapter
from puzzles.ch11_inference import (
    p72_kv_cache_append,
    p73_kv_cache_int8,
    p74_flash_decoding,
    p75_continuous_batching,
    p76_top_k_sampling,
    p77_top_p_sampling,
    p78_llm_int8,
    p79_speculative_sampling,
    p80_distillation_kl,
)
from puzzles.ch11_inference.rules import max_shared_loads_per_row
from puzzles.checker import check_file
from puzzles.compare import first_mismatch
from puzzles.loader import load_solution
from puzzles.model import RunStats
from puzzles.rules import SHARED_LD

ROOT = Path(__file__).resolve().parents[2]
MODULES = (p72_kv_cache_append, p73_kv_cache_int8, p74_flash_decoding, p75_continuous_batching,
           p76_top_k_sampling, p77_top_p_sampling, p78_llm_int8, p79_speculative_sampling, p80_distillation_kl)
IDS = [m.PUZZLE.slug for m in MODULES]
# Outputs that are whole caches: only the slots a kernel writes start as a sentinel.
CACHE_OUTPUTS = {"k_cache", "v_cache", "k_scale", "v_scale"}
SENTINELS = {np.dtype(np.int32): -7, np.dtype(np.int8): -128}


def _constants(path: Path) -> dict[str, object]:
    """Module-level constants of a solution or starter file (NAME = <expression of earlier constants>)."""
    found: dict[str, object] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = eval(compile(ast.Expression(node.value), str(path), "eval"),
                                                 {}, dict(found))
            except Exception:
                pass
    return found


def _check_outputs_start_as_sentinels(puzzle, case) -> None:
    expected = puzzle.spec(**copy.deepcopy(dict(case.buffers)))
    for name in puzzle.outputs:
        start, want = case.buffers[name], expected[name]
        assert want.shape == start.shape, (case.name, name)
        floating = np.issubdtype(start.dtype, np.floating)
        unset = np.isnan(start) if floating else start == SENTINELS[start.dtype]
        assert np.isfinite(want).all() if floating else not (want == SENTINELS[start.dtype]).any()
        if name in CACHE_OUTPUTS:        # written slots start as the sentinel, the rest must not change
            same = np.isclose(want, start, equal_nan=True) if floating else want == start
            assert (unset == ~same).all(), (case.name, name)
        else:
            assert unset.all(), (case.name, name)


def test_chapter_package():
    assert chapter.NUMBER == 11 and chapter.TITLE == "Inference engineering"
    for number in range(72, 81):
        assert f"**{number} " in chapter.INTRODUCTION
    assert "**Goes deeper:**" in chapter.INTRODUCTION


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_puzzle_is_complete(module):
    puzzle = module.PUZZLE
    assert puzzle.chapter == 11 and 72 <= puzzle.number <= 80
    assert f"p{puzzle.number}_" in Path(module.__file__).name
    assert len(puzzle.hints) == 3 and puzzle.reading and puzzle.reading in puzzle.description
    for part in ("**Example", "**What's new:**", "**Launch:**", "**Read more:**", "```"):
        assert part in puzzle.description, part
    cases = puzzle.make_cases()
    assert len(cases) >= 4 and len({c.name for c in cases}) == len(cases)
    for case in cases:
        for step in case.steps:
            assert step.kernel in puzzle.kernels and all(a in case.buffers for a in step.args)
        _check_outputs_start_as_sentinels(puzzle, case)
    assert (ROOT / "solutions" / puzzle.solution_file).is_file()
    assert (ROOT / "puzzles" / "starters" / puzzle.starter_file).is_file()
    wrong = list((ROOT / "tests" / "puzzles" / "wrong").glob(puzzle.slug.replace("-", "_") + "__*.py"))
    assert len(wrong) >= 2


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_cases_for_other_seeds_are_valid_and_reproducible(module):
    puzzle = module.PUZZLE
    for seed in (1, 2):
        first = puzzle.make_cases(np.random.default_rng(seed))
        again = puzzle.make_cases(np.random.default_rng(seed))
        assert [c.name for c in first] == [c.name for c in again]
        for a, b in zip(first, again):
            for name, value in a.buffers.items():
                np.testing.assert_array_equal(value, b.buffers[name])
            _check_outputs_start_as_sentinels(puzzle, a)
    default, other = puzzle.make_cases(), puzzle.make_cases(np.random.default_rng(1))
    assert any(not np.array_equal(a.buffers[k], b.buffers[k], equal_nan=True)
               for a, b in zip(default, other) for k in a.buffers if isinstance(a.buffers[k], np.ndarray)
               and a.buffers[k].shape == b.buffers[k].shape) or any(
        a.buffers[k].shape != b.buffers[k].shape for a, b in zip(default, other) for k in a.buffers
        if isinstance(a.buffers[k], np.ndarray))
    # a worked example (the first case, where there is one) does not depend on the seed
    if default[0].name.startswith("worked example"):
        for name, value in default[0].buffers.items():
            np.testing.assert_array_equal(value, other[0].buffers[name])


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_launches_match_the_files_constants(module):
    puzzle = module.PUZZLE
    names = [n for n in ("H", "D", "PAGE", "CHUNK", "TPB", "V_MAX", "K_MAX", "ITEMS", "TILE", "SCAN_TPB",
                         "ROW_TPB", "THRESHOLD") if hasattr(module, n)]
    for folder, file in (("solutions", puzzle.solution_file), ("puzzles/starters", puzzle.starter_file)):
        consts = _constants(ROOT / folder / file)
        for name in names:
            if name in consts:
                assert consts[name] == getattr(module, name), f"{folder}/{file}: {name}"
    reference = _constants(ROOT / "solutions" / puzzle.solution_file)
    assert any(n in reference for n in names)


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_bench_builds_a_case_like_the_others(module):
    puzzle = module.PUZZLE
    small = puzzle.bench(4096)
    template = puzzle.make_cases()[0]
    assert set(small.buffers) == set(template.buffers)
    assert [s.kernel for s in small.steps] == [s.kernel for s in template.steps]
    assert [s.args for s in small.steps] == [s.args for s in template.steps]
    def size(case):
        return sum(v.size for v in case.buffers.values() if isinstance(v, np.ndarray))

    assert size(puzzle.bench(1 << 20)) >= 3 * size(small), "bench(n) should grow with n"


@pytest.mark.parametrize("module", [p72_kv_cache_append, p73_kv_cache_int8, p78_llm_int8, p79_speculative_sampling,
                                    p80_distillation_kl], ids=lambda m: m.PUZZLE.slug)
def test_bench_case_is_solved_by_the_reference(module):
    puzzle = module.PUZZLE
    case = puzzle.bench(2048)
    solution = load_solution(ROOT / "solutions" / puzzle.solution_file, puzzle.kernels)
    buffers = copy.deepcopy(dict(case.buffers))
    for step in case.steps:
        report = gpusim.launch(solution.kernels[step.kernel], step.grid, step.block,
                               [buffers[a] for a in step.args], instrument=False)
        assert not report.faults
    expected = puzzle.spec(**copy.deepcopy(dict(case.buffers)))
    assert first_mismatch(puzzle.outputs, buffers, expected, case.buffers, puzzle.rtol, puzzle.atol) is None


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_reference_passes_with_another_seed(module):
    puzzle = module.PUZZLE
    reseeded = dataclasses.replace(puzzle, make_cases=lambda rng=None: puzzle.make_cases(np.random.default_rng(5)))
    result = check_file(reseeded, ROOT / "solutions" / puzzle.solution_file)
    assert result.passed, [f.message for f in result.failures]
    assert result.stars == result.max_stars, result.next_star


def test_shared_work_rule():
    def stats(loads):
        return RunStats(0, 0, {}, {}, 0, True, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0,
                        metrics={} if loads is None else {SHARED_LD: loads})

    rule = max_shared_loads_per_row(7040, 8, "why")
    assert rule.check(stats(8 * 3524)) is None                     # the bitonic reference
    assert "16,384" in rule.check(stats(8 * 16384)) and "why" in rule.check(stats(8 * 16384))   # a rank sort
    assert rule.check(stats(None)) is not None                    # not measured: not passed


# --- correct kernels that waste something, and the stars they stop at ---------------------------------------

def _variant(slug_module, old: str, new: str, tmp_path: Path) -> Path:
    source = (ROOT / "solutions" / slug_module.PUZZLE.solution_file).read_text()
    assert old in source, old
    path = tmp_path / "variant.py"
    path.write_text(source.replace(old, new))
    return path


VARIANTS = {
    # a warp takes every fourth value of the token: one read and one write per thread, 4x the sectors
    "kv-cache-append": (p72_kv_cache_append,
                        "    d = cuda.threadIdx.x\n    h = cuda.threadIdx.y\n",
                        "    e = cuda.threadIdx.x * H + cuda.threadIdx.y\n    h = e // D\n    d = e % D\n",
                        1, "coalesced"),
    # the key tile without its padding column: 32-way bank conflicts in the dot products
    "flash-decoding": (p74_flash_decoding, "PADDED = D + 1", "PADDED = D", 2, "bank conflict"),
    # walk the offsets from the start instead of a binary search
    "continuous-batching": (p75_continuous_batching,
                            "    while hi - lo > 1:\n        mid = (lo + hi) // 2\n        at = cu_q[mid]\n"
                            "        if at <= i:\n            lo = mid\n            start = at\n        else:\n"
                            "            hi = mid\n            end = at\n",
                            "    while lo + 1 < hi and cu_q[lo + 1] <= i:\n        lo += 1\n"
                            "    start = cu_q[lo]\n    end = cu_q[lo + 1]\n",
                            1, "binary search"),
    # thread t loads slots 2t and 2t + 1: neighbouring threads 8 bytes apart
    "top-k-sampling": (p76_top_k_sampling,
                       "    for i in range(t, V_MAX, TPB):\n",
                       "    for i in range(2 * t, 2 * t + 2):\n",
                       1, "coalesced"),
    # read x_q and w_q straight from global memory in the k loop
    "llm-int8": (p78_llm_int8,
                 "            acc += numba.int32(a[ty, kk]) * numba.int32(wv)\n",
                 "            if row < rows and col < cols and k0 + kk < inner:\n"
                 "                acc += numba.int32(x_q[row, k0 + kk]) * numba.int32(w_q[k0 + kk, col])\n",
                 1, "shared tiles"),
    # read the chosen row again for the final test instead of keeping r in a register
    "speculative-sampling": (p79_speculative_sampling,
                             "    if r > 0 and incl > goal and incl - r <= goal:\n",
                             "    if t < vocab and a < g:\n"
                             "        r = max(numba.float32(0.0), p_probs[b, a, t] - q_probs[b, a, t])\n"
                             "    if r > 0 and incl > goal and incl - r <= goal:\n",
                             1, "one pass"),
    # a second pass over the row from global memory for the KL terms
    "distillation-kl": (p80_distillation_kl,
                        "            ls = s[r] - lse_s\n            lt = tt[r] - lse_t\n",
                        "            ls = student[b, i] / temp - lse_s\n"
                        "            lt = teacher[b, i] / temp - lse_t\n",
                        1, "one pass"),
}


@pytest.mark.parametrize("slug", list(VARIANTS))
def test_correct_but_wasteful_kernels_lose_stars(slug, tmp_path):
    module, old, new, stars, missing = VARIANTS[slug]
    result = check_file(module.PUZZLE, _variant(module, old, new, tmp_path))
    assert result.passed, [f.message for f in result.failures]
    assert result.stars == stars, (result.stars, result.next_star)
    assert missing in result.next_star
