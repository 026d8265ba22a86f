"""Tests for puzzles/compare.py: exact ints, float tolerance, NaN sentinels, the first wrong element."""

from __future__ import annotations

import numpy as np
import pytest

from puzzles.compare import PuzzleBug, first_mismatch, json_scalar


def _check(got, expected, before=None, rtol=0.0, atol=0.0):
    before = {"out": before} if before is not None else {}
    return first_mismatch(("out",), {"out": got}, {"out": expected}, before, rtol, atol)


def test_equal_outputs_match():
    assert _check(np.arange(5, dtype=np.int32), np.arange(5)) is None
    assert _check(np.array([True, False]), np.array([True, False])) is None


def test_ints_are_exact_and_the_first_wrong_index_is_reported():
    got = np.array([[1, 2], [3, 40], [5, 60]], dtype=np.int32)
    m = _check(got, np.array([[1, 2], [3, 4], [5, 6]]))
    assert m.index == (1, 1) and m.expected == 4 and m.got == 40 and (m.count, m.total) == (2, 6)
    assert "index [1, 1]: expected 4, got 40; 2 of 6 elements differ" in m.message


def test_floats_within_tolerance():
    got = np.array([1.0, 2.0001], dtype=np.float32)
    assert _check(got, [1.0, 2.0], rtol=1e-3) is None
    assert _check(got, [1.0, 2.0]).index == (1,)


def test_expected_is_rounded_to_the_output_dtype():
    a = np.float32(0.1)
    got = np.array([a * np.float32(3)], dtype=np.float32)
    assert _check(got, np.array([np.float64(a) * 3])) is None


def test_nan_where_a_number_is_expected_is_a_mismatch_and_unwritten_is_said():
    start = np.full(3, np.nan, np.float32)
    got = np.array([1, np.nan, 3], dtype=np.float32)
    m = _check(got, [1, 2, 3], before=start)
    assert m.index == (1,) and m.unchanged and "no thread wrote it" in m.message
    assert m.to_dict()["got"] == "nan"


def test_written_but_wrong_is_not_called_unwritten():
    m = _check(np.array([-1, 7], dtype=np.int64), [-1, 8], before=np.array([-1, -1]))
    assert m.index == (1,) and not m.unchanged


def test_first_output_in_order_wins():
    got = {"x": np.zeros(2), "y": np.ones(2)}
    m = first_mismatch(("x", "y"), got, {"x": [0, 1], "y": [0, 0]}, {})
    assert m.output == "x"


def test_inconsistent_spec_is_a_puzzle_bug():
    with pytest.raises(PuzzleBug, match="shape"):
        _check(np.zeros(3), np.zeros(4))
    with pytest.raises(PuzzleBug, match="no value"):
        first_mismatch(("out",), {"out": np.zeros(1)}, {}, {})


def test_json_scalar():
    assert json_scalar(np.float32(0.5)) == 0.5 and json_scalar(np.int64(3)) == 3
    assert json_scalar(np.float64("inf")) == "inf" and json_scalar(float("nan")) == "nan"
