"""Each case's outputs against the spec, handed back by the judge for the TUI (issue 10, item 7): capped, made
in the judging process, and out of reach of the player's file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from puzzles import registry, workspace
from puzzles.checker import case_generator, check_source
from puzzles.output_values import MAX_KEPT, box_lengths, output_values

WRONG = Path(__file__).resolve().parent / "wrong"
MAP = registry.get("map")
MAP_OK = workspace.reference_path(MAP).read_text()
SWAPS_THE_SPEC = WRONG / "map__cheat_swaps_the_spec.py"     # expects a + 1 and writes a + 1


def test_a_small_output_is_kept_whole_with_its_differing_cells():
    got = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.float32)
    want = np.array([1, 2, 3, 40, 5, 6, 70, 8], np.float64)
    kept = output_values("out", got, want)
    assert kept.whole and kept.origin == (0,) and kept.shape == (8,) and kept.dtype == "float32"
    assert kept.differs.tolist() == [False, False, False, True, False, False, True, False]
    assert kept.wrong == 2 and kept.first_wrong == (3,)
    assert kept.expected.dtype == np.float32          # as compared: the spec rounded to the output's dtype


def test_the_comparisons_rules_decide_which_cells_differ():
    nan = np.float32("nan")
    kept = output_values("out", np.array([nan, 1.0, 2.0], np.float32), np.array([nan, 1.001, 2.5]),
                         rtol=0.01)
    assert kept.differs.tolist() == [False, False, True]      # NaN = NaN, within rtol, outside it
    ints = output_values("n", np.array([3, 4], np.int32), np.array([3, 5]))
    assert ints.differs.tolist() == [False, True] and ints.got.dtype == np.int32


def test_a_large_output_is_kept_as_a_window_around_its_first_difference():
    want = np.arange(100_000, dtype=np.float32)
    got = want.copy()
    got[70_000] = -1
    got[70_003] = -2
    got[99_999] = -3                                         # outside the window: counted, not kept
    kept = output_values("out", got, want)
    assert kept.got.size == MAX_KEPT and not kept.whole
    assert kept.origin == (70_000 - MAX_KEPT // 4,)
    assert kept.got[MAX_KEPT // 4] == -1 and kept.expected[MAX_KEPT // 4] == 70_000
    assert np.flatnonzero(kept.differs).tolist() == [MAX_KEPT // 4, MAX_KEPT // 4 + 3]
    assert kept.wrong == 3 and kept.first_wrong == (70_000,) and kept.shape == (100_000,)


def test_a_2d_window_shares_the_cap_and_stays_inside_the_array():
    want = np.zeros((1000, 1000), np.float32)
    got = want.copy()
    got[500, 990] = 1
    kept = output_values("c", got, want)
    assert kept.got.shape == (64, 64) and kept.origin == (500 - 16, 1000 - 64)
    assert kept.differs[16, 990 - 936] and kept.wrong == 1 and kept.first_wrong == (500, 990)
    nothing = output_values("c", want, want)
    assert nothing.origin == (0, 0) and nothing.wrong == 0 and nothing.first_wrong is None


@pytest.mark.parametrize("shape", [(5000,), (3, 100_000), (1000, 1000), (7, 9, 300), (4096,), (4097,),
                                   (2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2)])
def test_the_window_never_keeps_more_than_the_cap(shape):
    lengths = box_lengths(shape)
    assert all(1 <= n <= s for n, s in zip(lengths, shape))
    assert int(np.prod(lengths)) <= MAX_KEPT
    assert int(np.prod(lengths)) >= MAX_KEPT // 4 or lengths == shape     # and uses most of it


def test_a_check_hands_back_every_cases_outputs_against_the_spec():
    result = check_source(MAP, MAP_OK.replace("+ 10", "+ 1"), "/virtual/map.py", seed=5)
    assert not result.passed and result.cases
    for case, made in zip(result.cases, MAP.make_cases(case_generator(5))):
        a = made.buffers["a"]
        kept = case.outputs["out"]
        assert kept.whole
        np.testing.assert_array_equal(kept.expected, a + np.float32(10))       # the puzzle's rule, by hand
        np.testing.assert_array_equal(kept.got, a + np.float32(1))
        assert kept.differs.all() and kept.wrong == a.size


def test_a_passing_case_hands_back_its_outputs_too_and_a_faulting_one_what_it_left():
    passed = check_source(MAP, MAP_OK, "/virtual/map.py", seed=5)
    assert passed.passed and all(c.outputs["out"].wrong == 0 for c in passed.cases)
    faulty = MAP_OK.replace("out[i] = a[i] + 10", "out[i + 1] = a[i] + 10")
    assert faulty != MAP_OK
    result = check_source(MAP, faulty, "/virtual/map.py", seed=5)
    case = result.cases[0]
    assert case.status == "fail" and case.failures[0].kind == "fault"
    a = MAP.make_cases(case_generator(5))[0].buffers["a"]
    kept = case.outputs["out"]
    assert np.isnan(kept.got[0]) and kept.got[1:].tolist() == (a[:-1] + np.float32(10)).tolist()
    assert kept.expected.tolist() == (a + np.float32(10)).tolist() and kept.wrong == a.size


def _assert_honest_expected(result):
    assert not result.passed and result.stars == 0
    for case, made in zip(result.cases, MAP.make_cases(case_generator(result.seed))):
        kept = case.outputs["out"]
        np.testing.assert_array_equal(kept.expected, made.buffers["a"] + np.float32(10))
        np.testing.assert_array_equal(kept.got, made.buffers["a"] + np.float32(1))
        assert kept.differs.all()


def test_a_file_that_swaps_the_spec_cannot_forge_expected():
    """The file makes the spec expect what its kernel writes; the expected values handed back stay the real
    spec's, and every cell is marked wrong."""
    _assert_honest_expected(check_source(MAP, SWAPS_THE_SPEC.read_text(), str(SWAPS_THE_SPEC), seed=7))


def test_through_the_apps_worker_expected_cannot_be_forged_either(judge):
    _assert_honest_expected(judge.check(MAP, SWAPS_THE_SPEC.read_text(), str(SWAPS_THE_SPEC), seed=7))
