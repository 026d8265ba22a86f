"""The numba-cuda suite runner's bookkeeping: pytest's counts (the CI floor reads them) and the causes table."""

from __future__ import annotations

import json

from benchmarks.cudasim_suite.__main__ import BASELINE, counts
from benchmarks.cudasim_suite.causes import OTHER, by_cause, cause_of, lost_tests


def _run(tests, closing=""):
    return {"engine": "strict", "label": "strict", "wall": 1.0, "tests": tests, "closing": closing}


def test_counts_come_from_pytests_closing_line():
    run = _run([{"id": "a", "outcome": "passed"}],
               "2 failed, 787 passed, 1145 skipped, 6 xfailed, 1 error in 84.49s (0:01:24)")
    c = counts(run)
    assert (c["passed"], c["failed"], c["skipped"], c["xfailed"]) == (787, 3, 1145, 6)


def test_counts_fall_back_to_the_records_when_the_run_was_cut_short():
    run = _run([{"id": "a", "outcome": "passed"}, {"id": "b", "outcome": "error"}, {"id": "c", "outcome": "skipped"}])
    c = counts(run)
    assert (c["passed"], c["failed"], c["skipped"]) == (1, 1, 1)


def _failed(test_id, message):
    return {"id": test_id, "outcome": "failed", "message": message}


def test_causes_read_gpusims_message_and_the_quoted_source_line():
    cases = {
        "gpusim.faults.KernelCompileError: cannot read the source of kernel 'k': could not get source code": "inspect",
        "gpusim.faults.UnsupportedConstruct: strings cannot be used in a kernel (f.py:3)\n    rec[0][\"b\"] = 3":
            "record",
        "gpusim.faults.UnsupportedConstruct: strings cannot be used in a kernel (f.py:3)\n    arr[i] = b\"XYZ\"":
            "bytes and strings",
        "gpusim.faults.UnsupportedConstruct: cuda.atomic.add is not supported by gpusim (f.py:9)": "as values",
        "gpusim.faults.DataRace: tid=[13, 0, 0] ctaid=[0, 0, 0]: Data race on global array 'y'": "gpusim is right",
        "AssertionError: np.int32(32) != 0": "different value",
        "AssertionError: FloatingPointError not raised": "debug-mode",
    }
    for message, expected in cases.items():
        assert expected in cause_of(_failed("t.py::T::test", message)), message
    assert cause_of(_failed("t.py::T::test", "ZeroDivisionError: no rule for this")) == OTHER


def test_lost_tests_are_those_passing_on_the_simulator_only():
    sim = _run([{"id": "a", "outcome": "passed"}, {"id": "b", "outcome": "passed"}, {"id": "c", "outcome": "failed"}])
    other = _run([{"id": "a", "outcome": "passed"}, _failed("b", "AssertionError: 1 != 2"), _failed("c", "x")])
    lost = lost_tests(sim, other)
    assert [t["id"] for t in lost] == ["b"]
    assert list(by_cause(lost)) == [cause_of(lost[0])]


def test_baseline_records_the_simulators_counts_and_a_floor():
    b = json.loads(BASELINE.read_text())
    assert b["simulator"]["passed"] == 787 and b["strict_floor"] > 0
