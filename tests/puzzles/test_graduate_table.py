"""The rows of graduate mode's table (puzzles/graduate/table.py): the derived numbers, by hand."""

from __future__ import annotations

import pytest

from puzzles.graduate import table


def _row(**kw):
    row = table.Row(6, "blocks", "numba", cases_passed=6, cases_total=6, bench_check="pass", size="2^26")
    for k, v in kw.items():
        setattr(row, k, v)
    return row


def test_a_memory_bound_row_is_judged_against_the_copy_bandwidth():
    # 2^26 float32 in and out = 536,870,912 bytes in 160 us -> 3.355 TB/s; of a 4.1 TB/s copy: 81.8 %
    row = _row(time_s=160e-6, bytes=2 * 4 * 2**26, flops=2**26, bound="memory", estimate_s=114.8e-6)
    table.fill_numbers(row, 4.1e12, {"float32": 66.9e12}, {"float32": 2**26})
    assert row.gbps == pytest.approx(3.3554432e12)
    assert row.peak_kind == "copy" and row.peak_fraction == pytest.approx(3.3554432e12 / 4.1e12)
    assert row.flops_per_s == pytest.approx(2**26 / 160e-6)
    assert row.ratio == pytest.approx(160 / 114.8)
    cells = dict(zip(table.COLUMNS, table.cells(row)))
    assert cells["GB/s"] == "3,355" and cells["% of peak"] == "81.8% copy" and cells["meas/est"] == "1.39"
    assert cells["time"] == "160 µs" and cells["sim estimate"] == "115 µs mem"
    assert cells["correct"] == "6/6 ok, bench ok"


def test_a_compute_bound_row_is_judged_against_the_flop_roof_of_its_dtypes():
    # 1e12 float32 FLOPs at 66.9 T (14.95 ms) + 1e11 float64 at 33.4 T (2.99 ms) = 17.94 ms at the roof
    row = _row(time_s=25e-3, bytes=10**8, flops=11 * 10**11, bound="compute", estimate_s=18e-3)
    table.fill_numbers(row, 4.1e12, {"float32": 66.9e12, "float64": 33.4e12}, {"float32": 10**12, "float64": 10**11})
    limit = 1e12 / 66.9e12 + 1e11 / 33.4e12
    assert row.peak_kind == "FP roof" and row.peak_fraction == pytest.approx(limit / 25e-3)


def test_wrong_rows_and_their_reasons():
    rows = [_row(), _row(slug="shared", cases_passed=4), _row(slug="dot", failure="compile: numba-cuda cannot"),
            _row(slug="scan", bench_check="FAIL: wrong output `out` at index [3]")]
    assert [r.correct for r in rows] == [True, False, False, False]
    lines = table.problems(rows)
    assert len(lines) == 3 and "2 case(s) wrong" in lines[0] and "compile" in lines[1] and "index [3]" in lines[2]
    assert table.cells(rows[1])[3] == "4/6 FAIL, bench ok"


def test_a_row_without_time_or_estimate_shows_dashes():
    row = _row(estimate_note="not finished")
    table.fill_numbers(row, 4e12, {}, None)
    cells = table.cells(row)
    assert cells[5:] == ["—"] * 6
    assert table.sig(0.004567) == "0.00457" and table.sig(70.25) == "70.2" and table.sig(4101.2) == "4,101"


def test_a_puzzles_notes_appear_once_whatever_its_back_ends_and_a_missing_check_names_its_back_end():
    rows = [_row(backend=b, size="max", bench_note="one block by design", time_s=3e-6, estimate_note="too big",
                 bench_check="pass" if b == "numba" else "not checked: no outputs") for b in ("numba", "triton")]
    assert table.notes(rows) == ["6 blocks: one block by design", "6 blocks: no simulator estimate (too big)",
                                 "6 blocks (triton): benchmark outputs not checked: no outputs"]
