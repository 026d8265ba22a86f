"""More of the language numba-cuda's own test suite needs, run through the drop-in (GPUSIM_CUDASIM=strict):
strings stored into S/U arrays and record fields, recursive device functions, ``isinstance`` on a static
type, a device function returning a value on some paths and None on others, ``alignment=``.

Every launch happens in a child process (numba's simulator replaces numba.cuda when imported): the kernels are
in cudasim_more_language.py. Expected values come from numba's rules and hand counts, never from gpusim.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from dropin_child import run_child

HERE = Path(__file__).resolve().parent


#: a results file cudasim_more_language.py wrote on a real GPU: the same expectations, checked against it
RECORDED = os.environ.get("GPUSIM_MORE_LANGUAGE_RESULTS")
on_gpusim_only = pytest.mark.skipif(bool(RECORDED), reason="results recorded on a GPU")


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    if RECORDED:
        return json.loads(Path(RECORDED).read_text())
    return run_child(HERE / "cudasim_more_language.py", tmp_path_factory.mktemp("more_language") / "res.json")


def test_nothing_was_refused(res):
    assert res["errors"] == {}


@on_gpusim_only
def test_every_launch_ran_on_gpusim(res):
    assert res["stats"]["fallback"] == 0 and res["stats"]["fallbacks"] == {}


def test_string_constants_are_truncated_or_padded_with_nuls(res):
    # U6 cells, all 5 written (8 threads): "even" padded with NULs, the long one cut at 6 characters
    assert res["words"] == ["even", "an odd", "even", "an odd", "even"]
    assert res["words_raw"] == "even\0\0an oddeven\0\0an oddeven\0\0"  # "old" overwritten, NULs and all
    # S3 cells held b"zz\0"; b"t" leaves b"t\0\0"; cell 3 is then copied from an S2 cell, b"cd" -> b"cd\0"
    raw = [ord(c) for c in "t\0\0" * 3 + "cd\0" + "t\0\0"]
    assert res["tag_raw"] == raw


def test_string_constants_store_into_record_fields(res):
    assert res["recs"] == [[0, "row"], [1, "much too"], [2, "row"]]


def test_self_recursion_with_and_without_a_signature(res):
    fib = [0, 1]
    while len(fib) < 12:
        fib.append(fib[-1] + fib[-2])
    assert res["fibs"][:2] == [55, 55]  # fib(10), the argument the same in every thread
    assert res["fibs"][2:] == fib       # fib(i) in thread i: each lane recurses to its own depth


def test_recursion_depth_differs_between_lanes(res):
    # the Collatz steps of 1..12 (OEIS A006577), counted by hand
    assert res["steps"] == [0, 1, 7, 2, 5, 8, 16, 3, 19, 6, 14, 9]
    assert res["countdown"] == [3, 5, 0, 7]


def test_mutual_recursion(res):
    assert res["even"] == [i % 2 == 0 for i in range(12)]


def test_a_recursive_return_type_is_typed_again_until_it_settles(res):
    # `return 0` (int64) and `return x + f(n - 1, x)` (float64): numba unifies them to float64
    assert res["sums"] == [0.5 * i for i in range(12)]


@on_gpusim_only
def test_a_runaway_recursion_is_a_fault_naming_the_thread_not_a_hang(res):
    msg = res["runaway"]
    assert msg.startswith("KernelError:") and "'countdown' recursed more than 200 calls deep" in msg
    assert "thread (1, 0, 0)" in msg and "RecursionError" not in msg


@on_gpusim_only
def test_a_recursion_without_a_typed_return_is_refused_at_compile_time(res):
    msg = res["never_typed"]
    assert msg.startswith("UnsupportedConstruct: cannot type infer runaway recursion"), msg
    assert "return no_base_case(x)" in msg


def test_isinstance_is_decided_on_the_static_type_by_numbas_equality_rule(res):
    # first_or_self((7, 2.5)) + first_or_self(5) = 7 + 5; then int64 is int; float32 is not float (float64) but
    # is np.float32; (7, 2.5) is a tuple; int64 is none of float, complex, bool, tuple
    assert res["instance_checks"] == [12, 1, 0, 1, 1, 0]


def test_a_value_on_some_paths_and_none_on_others_is_an_optional(res):
    opt = res["optionals"]
    assert opt["missing"] == [i % 2 == 1 for i in range(6)]
    assert opt["out"] == [100, -1, 101, -1, 102, -1]
    # first_present(half(i), half(i + 1)): i // 2 where i is even, else (i + 1) // 2
    assert opt["chosen"] == [0, 1, 1, 2, 2, 3]


@on_gpusim_only
def test_none_used_as_a_number_is_a_fault_at_the_line_and_thread(res):
    msg = res["none_as_number"]
    assert msg.startswith("KernelError:") and "Expected int64, got None" in msg
    assert "out[i] = half_if_even(i) + 1" in msg and "thread (1, 0, 0)" in msg
