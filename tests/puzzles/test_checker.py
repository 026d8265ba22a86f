"""Tests for puzzles/checker.py: judging a solution — cases, faults, mismatches, constraints, stars.

Most tests use ``fake_engine`` (a scripted ``gpusim.launch``) so they test the judging alone; the tests marked
``needs_engine`` run real kernels through gpusim.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap

import numpy as np
from puzzle_fixtures import FAKE_OK, REFERENCE, TINY, needs_engine, write

import gpusim
from gpusim.faults import DataRace, KernelTimeout, LaunchError, OutOfBounds
from puzzles import checker
from puzzles.checker import check_file, max_stars
from puzzles.model import Rule, Star

NOTHING = "from numba import cuda\n\n\n@cuda.jit\ndef add_one(out, a, n):\n    pass\n"


def test_correct_solution_passes_and_earns_every_star(tmp_path, fake_engine):
    result = check_file(TINY, write(tmp_path, "ok.py", FAKE_OK))
    assert result.failures == []
    assert result.passed and result.stars == 3 == result.max_stars
    assert [c.status for c in result.cases] == ["pass", "pass", "pass"]
    assert result.next_star is None
    assert len(fake_engine.calls) == 3
    kernel, grid, block, args, shared, options = fake_engine.calls[0]
    assert (grid, block, shared) == (1, 4, 0) and args[2] == 4
    assert options == {"trace": False, "max_steps": checker.MAX_STEPS}


def test_wrong_output_names_first_index_expected_got_and_count(tmp_path, fake_engine):
    path = write(tmp_path, "off.py", """
        from numba import cuda


        @cuda.jit
        def add_one(out, a, n):
            out[1:n] = a[1:n] + 1
    """)
    result = check_file(TINY, path)
    assert not result.passed and result.stars == 0
    mismatch = [f for f in result.failures if f.kind == "mismatch"]
    assert len(mismatch) == 3                      # one per case
    first = mismatch[0]
    assert first.case == "n=4"
    assert first.detail["index"] == [0] and first.detail["expected"] == 1.0 and first.detail["got"] == "nan"
    assert first.detail["count"] == 1 and first.detail["total"] == 4
    assert "index [0]" in first.message and "no thread wrote it" in first.message


def test_a_fault_fails_the_case_with_its_message(tmp_path, fake_engine):
    fault = OutOfBounds("an index is outside the array", kernel="add_one", filename="k.py", lineno=7,
                        block=(0, 0, 0), thread=(4, 0, 0), array="a", index=(4,))
    fake_engine.faults = [fault]
    result = check_file(TINY, write(tmp_path, "ok.py", FAKE_OK))
    assert not result.passed
    failure = result.failures[0]
    assert failure.kind == "fault" and failure.fault is fault
    assert "k.py:7" in failure.message and "index [4]" in failure.message
    assert all(c.status == "fail" for c in result.cases)   # faults do not stop the other cases
    assert failure.detail == {"launch": 1, "kernel": "add_one", "faults": ["OutOfBounds"]}


def test_every_fault_of_a_launch_is_named(tmp_path, fake_engine):
    fake_engine.faults = [OutOfBounds("out of bounds", filename="k.py", lineno=7),
                          DataRace("a race", filename="k.py", lineno=9)]
    failure = check_file(TINY, write(tmp_path, "ok.py", FAKE_OK)).failures[0]
    assert failure.detail["faults"] == ["OutOfBounds", "DataRace"]
    assert "also in this launch: DataRace at line 9" in failure.message


def test_a_timeout_stops_the_check(tmp_path, fake_engine):
    fake_engine.faults = [KernelTimeout("A loop ran too long", filename="k.py", lineno=5)]
    result = check_file(TINY, write(tmp_path, "ok.py", FAKE_OK))
    assert [c.status for c in result.cases] == ["fail", "not run", "not run"]
    assert len(fake_engine.calls) == 1 and "k.py:5" in result.failures[0].message


def test_a_timeout_behind_another_fault_stops_the_check_too(tmp_path, fake_engine):
    # a learner's reduction without its `s //= 2`: out of bounds at once, then endless (fuzz file seed 564)
    fake_engine.faults = [OutOfBounds("out of bounds", filename="k.py", lineno=7),
                          KernelTimeout("A loop ran too long", filename="k.py", lineno=5)]
    result = check_file(TINY, write(tmp_path, "ok.py", FAKE_OK))
    assert [c.status for c in result.cases] == ["fail", "not run", "not run"]
    assert len(fake_engine.calls) == 1 and "k.py:7" in result.failures[0].message


def test_syntax_error_is_a_compile_failure_with_file_and_line(tmp_path, fake_engine):
    path = write(tmp_path, "bad.py", """
        def add_one(out, a, n)
            out[:] = a + 1
    """)
    result = check_file(TINY, path)
    assert [f.kind for f in result.failures] == ["compile"]
    assert f"{path}:1" in result.failures[0].message
    assert (result.failures[0].filename, result.failures[0].lineno) == (str(path), 1)
    assert result.cases == [] and fake_engine.calls == []


def test_missing_kernel_is_a_compile_failure(tmp_path, fake_engine):
    result = check_file(TINY, write(tmp_path, "none.py", "def other(x):\n    return x\n"))
    assert result.failures[0].kind == "compile"
    assert "no kernel named `add_one`" in result.failures[0].message and "other" in result.failures[0].message


def test_launch_error_stops_the_check(tmp_path, fake_engine):
    fake_engine.error = LaunchError("add_one takes 2 arguments, the launch passes 3")
    result = check_file(TINY, write(tmp_path, "ok.py", FAKE_OK))
    assert [f.kind for f in result.failures] == ["error"]
    assert "could not be launched" in result.failures[0].message
    assert [c.status for c in result.cases] == ["fail", "not run", "not run"]


def test_a_simulator_crash_is_reported_as_our_bug_not_a_traceback(tmp_path, fake_engine):
    fake_engine.error = ZeroDivisionError("division by zero in the lane engine")
    result = check_file(TINY, write(tmp_path, "ok.py", FAKE_OK))
    message = result.failures[0].message
    assert result.failures[0].kind == "error"
    assert "bug in gpu-puzzles" in message and "ZeroDivisionError" in message and "\n" not in message
    assert "Traceback" in result.debug[0]           # kept for bug reports, not shown


def test_constraint_violation_fails_and_is_listed_once(tmp_path, fake_engine):
    fake_engine.reads = {"a": 3}
    result = check_file(TINY, write(tmp_path, "ok.py", FAKE_OK))
    assert not result.passed and result.stars == 0
    constraint = [f for f in result.failures if f.kind == "constraint"]
    assert len(constraint) == 1
    assert "at most 1 read of `a` per thread" in constraint[0].message and "3 times" in constraint[0].message
    assert all(any(f.kind == "constraint" for f in c.failures) for c in result.cases)


def test_star_tiers_are_awarded_in_order(tmp_path, fake_engine):
    fake_engine.sectors = (4, 1)                    # not coalesced: tier 2 fails, tier 3 would hold
    result = check_file(TINY, write(tmp_path, "ok.py", FAKE_OK))
    assert result.passed and result.stars == 1
    assert result.next_star.startswith("★★ coalesced") and "5 32-byte sectors" in result.next_star

    fake_engine.sectors, fake_engine.bank_conflicts = (1, 1), 2
    result = check_file(TINY, write(tmp_path, "ok.py", FAKE_OK))
    assert result.stars == 2 and result.next_star.startswith("★★★ no bank conflicts")


def test_a_star_needs_its_rules_on_every_case(tmp_path, fake_engine, monkeypatch):
    only_small = Rule("small launches", lambda s: None if s.global_reads_per_thread < 2 else "too many")
    puzzle = dataclasses.replace(TINY, stars=(Star(2, "frugal", (only_small,)),))
    fake_engine.reads = {"a": 1}
    assert check_file(puzzle, write(tmp_path, "ok.py", FAKE_OK)).stars == 2
    calls = iter([1, 1, 5])

    class Varying:
        def __init__(self, engine):
            self.engine = engine

        def __call__(self, *args, **kw):
            self.engine.reads = {"a": next(calls)}
            return self.engine(*args, **kw)

    monkeypatch.setattr(gpusim, "launch", Varying(fake_engine))
    result = check_file(dataclasses.replace(puzzle, constraints=()), write(tmp_path, "ok.py", FAKE_OK))
    assert result.passed and result.stars == 1 and "case 'n=3'" in result.next_star


def test_without_instrumentation_only_the_first_star_is_given(tmp_path, fake_engine):
    fake_engine.with_counts = False
    result = check_file(TINY, write(tmp_path, "ok.py", FAKE_OK))
    assert result.passed and result.stars == 1
    assert any("not measured" in note for note in result.notes)
    assert all(not c.stats_complete for c in result.cases)


def test_case_buffers_are_not_touched_and_spec_sees_inputs(tmp_path, fake_engine):
    seen = []

    def spec(out, a, n):
        seen.append(np.isnan(out).all())
        return {"out": a + np.float32(1)}

    cases = TINY.make_cases()
    puzzle = dataclasses.replace(TINY, spec=spec, make_cases=lambda rng=None: cases)
    assert check_file(puzzle, write(tmp_path, "ok.py", FAKE_OK)).passed
    assert seen == [True, True, True]
    assert all(np.isnan(c.buffers["out"]).all() for c in cases)


def test_a_puzzle_bug_is_named_as_such(tmp_path, fake_engine):
    puzzle = dataclasses.replace(TINY, spec=lambda out, a, n: {"wrong_name": a})
    result = check_file(puzzle, write(tmp_path, "ok.py", FAKE_OK))
    assert result.failures[0].kind == "error" and "puzzle 'tiny-add' has a bug" in result.failures[0].message


def test_printed_output_is_captured(tmp_path, fake_engine, capsys):
    path = write(tmp_path, "chatty.py", "print('hello from the file')\n" + textwrap.dedent(FAKE_OK))
    result = check_file(TINY, path)
    assert "hello from the file" in result.stdout
    assert "hello" not in capsys.readouterr().out


def test_to_dict_is_strict_json(tmp_path, fake_engine):
    fake_engine.faults = [OutOfBounds("out of bounds", filename="k.py", lineno=3, array="a", index=(9,))]
    for source in (FAKE_OK, NOTHING):
        doc = check_file(TINY, write(tmp_path, "x.py", source)).to_dict()
        text = json.dumps(doc, allow_nan=False)
        assert json.loads(text)["puzzle"] == "tiny-add"
    fake_engine.faults = []
    doc = check_file(TINY, write(tmp_path, "y.py", NOTHING)).to_dict()
    json.dumps(doc, allow_nan=False)
    assert set(doc) >= {"schema", "puzzle", "passed", "stars", "max_stars", "next_star", "failures", "cases"}
    assert doc["cases"][0]["failures"][0]["detail"]["got"] == "nan"


def test_max_stars():
    assert max_stars(TINY) == 3
    assert max_stars(dataclasses.replace(TINY, stars=())) == 1


# --- through the real simulator --------------------------------------------------------------------------


@needs_engine
def test_real_reference_passes(tmp_path):
    result = check_file(TINY, write(tmp_path, "ref.py", REFERENCE))
    assert result.passed, [f.message for f in result.failures]
    assert result.stars >= 1


@needs_engine
def test_real_missing_guard_is_out_of_bounds(tmp_path):
    def wide(case):   # one block of 32 threads for every n: the guard matters
        return dataclasses.replace(case, steps=(dataclasses.replace(case.steps[0], block=32),))

    puzzle = dataclasses.replace(TINY, make_cases=lambda rng=None: tuple(wide(c) for c in TINY.make_cases()))
    path = write(tmp_path, "noguard.py", """
        from numba import cuda


        @cuda.jit
        def add_one(out, a, n):
            i = cuda.threadIdx.x
            out[i] = a[i] + 1
    """)
    result = check_file(puzzle, path)
    assert not result.passed
    fault = result.failures[0].fault
    assert type(fault).__name__ == "OutOfBounds" and fault.lineno == 7
    assert f"{path}:7" in result.failures[0].message


@needs_engine
def test_real_endless_loop_times_out(tmp_path):
    path = write(tmp_path, "loop.py", """
        from numba import cuda


        @cuda.jit
        def add_one(out, a, n):
            i = cuda.threadIdx.x
            while i < n:
                out[i] = a[i] + 1
    """)
    result = check_file(TINY, path)
    assert not result.passed
    assert type(result.failures[0].fault).__name__ == "KernelTimeout"


@needs_engine
def test_real_unsupported_construct_is_a_compile_failure(tmp_path):
    path = write(tmp_path, "gen.py", """
        from numba import cuda


        @cuda.jit
        def add_one(out, a, n):
            i = cuda.threadIdx.x
            out[i] = sum(x for x in range(3))
    """)
    result = check_file(TINY, path)
    assert result.failures[0].kind == "compile" and f"{path}:7" in result.failures[0].message
