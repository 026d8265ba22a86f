"""More of the language numba-cuda's own test suite needs, run through the drop-in (GPUSIM_CUDASIM=strict):
strings stored into S/U arrays and record fields, recursive device functions, ``isinstance`` on a static
type, a device function returning a value on some paths and None on others; and what numba-cuda refuses on a
GPU among them, refused by gpusim too.

Every launch happens in a child process (numba's simulator replaces numba.cuda when imported): the kernels are
in cudasim_more_language.py, each case launched on its own. Expected values come from numba's rules and hand
counts, never from gpusim. With GPUSIM_MORE_LANGUAGE_RESULTS set, the same tests check the results that script
wrote on a real GPU: every value the GPU gave is compared, and the cases numba-cuda must refuse must be refused.
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

#: the cases numba-cuda 0.30.4 refuses on the H200 (2026-12-02), and what gpusim's refusal of each must say;
#: run_type_change is numba-cuda's test_recursion.py test_type_change, which it skips ("Needs
#: insert_unresolved_ref support in target"): the GPU run confirms it
REFUSED = {
    "run_copy_other_length": "cannot store a bytes[2] element into a bytes[3] cell",
    "run_mutual_recursion": "mutual recursion: device functions call each other (is_even -> is_odd -> is_even)",
    "run_type_change": "'type_change' is called again, before it is compiled, with other argument types",
    # numba-cuda's partial typing of the branch isinstance rules out stops at getitem(int64, 0) (the H200's
    # TypingError); kind_items' isinstance asks about a variable two assignments reach (checked with
    # numba-cuda's own compiler on the CPU, and on the H200: docs/gpu-runs/2026-12-02-more-language-h200-2.json)
    "run_first_items": "numba-cuda types this branch although isinstance() rules it out",
    "run_kind_items": 'isinstance() cannot determine the type of variable "b" due to a branch',
}
#: refused on a GPU only: numba's simulator calls a plain Python function, and so does the drop-in
REFUSED_ON_A_GPU = {"run_plain_helper": "Untyped global name 'plain_first_or_self'"}


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    if RECORDED:
        return json.loads(Path(RECORDED).read_text())
    return run_child(HERE / "cudasim_more_language.py", tmp_path_factory.mktemp("more_language") / "res.json")


def value(res: dict, key: str):
    """A case's outputs; on a GPU a case numba-cuda refused has none (test_only_what_numba_cuda_refuses_is_refused
    fails for it), so its value tests are skipped rather than failed twice."""
    if RECORDED and key not in res:
        pytest.skip(f"no {key!r} in the GPU's results (see its errors)")
    return res[key]


def test_only_what_numba_cuda_refuses_is_refused(res):
    expected = REFUSED | (REFUSED_ON_A_GPU if RECORDED else {})
    assert sorted(res["errors"]) == sorted(expected), res["errors"]
    if RECORDED:   # the GPU's messages are numba-cuda's: the same cases refused is what is compared
        return
    for case, words in expected.items():
        assert words in res["errors"][case], res["errors"][case]


@on_gpusim_only
def test_each_refusal_names_the_line_and_what_numba_cuda_accepts(res):
    err = res["errors"]
    assert err["run_copy_other_length"].startswith("KernelCompileError: ")
    assert "of its own length (S2 here); store a string constant" in err["run_copy_other_length"]
    assert "tags[i] = src[1]" in err["run_copy_other_length"]
    for case, line in (("run_mutual_recursion", "return is_even(n - 1)"),
                       ("run_type_change", "return x + type_change(x - y, y)")):
        assert err[case].startswith("UnsupportedConstruct: ") and line in err[case]
        assert "compiles a device function that calls itself with the same argument types" in err[case]


@on_gpusim_only
def test_every_launch_ran_on_gpusim(res):
    assert res["stats"]["fallback"] == 0 and res["stats"]["fallbacks"] == {}


def test_string_constants_are_truncated_or_padded_with_nuls(res):
    # U6 cells, all 5 written (8 threads): "even" padded with NULs, the long one cut at 6 characters
    assert value(res, "words") == ["even", "an odd", "even", "an odd", "even"]
    assert res["words_raw"] == "even\0\0an oddeven\0\0an oddeven\0\0"  # "old" overwritten, NULs and all
    # S3 cells held b"zz\0"; b"t" leaves b"t\0\0"
    assert res["tag_raw"] == [ord(c) for c in "t\0\0" * 5]


def test_string_constants_store_into_record_fields(res):
    assert value(res, "recs") == [[0, "row"], [1, "much too"], [2, "row"]]


def test_a_string_element_copies_into_a_cell_of_its_own_length(res):
    same = value(res, "same_length")
    # S3 from [b"a", b"bb", b"ccc", b""] reversed: every byte of the cell written, NULs where the source has them
    assert same["tag_raw"] == [ord(c) for c in "\0\0\0" + "ccc" + "bb\0" + "a\0\0"]
    assert same["words_raw"] == "up\0\0downup\0\0down"


def test_self_recursion_with_and_without_a_signature(res):
    fib = [0, 1]
    while len(fib) < 12:
        fib.append(fib[-1] + fib[-2])
    assert value(res, "fibs")[:2] == [55, 55]  # fib(10), the argument the same in every thread
    assert res["fibs"][2:] == fib       # fib(i) in thread i: each lane recurses to its own depth


def test_recursion_depth_differs_between_lanes(res):
    # the Collatz steps of 1..12 (OEIS A006577), counted by hand
    assert value(res, "steps") == [0, 1, 7, 2, 5, 8, 16, 3, 19, 6, 14, 9]
    assert value(res, "countdown") == [3, 5, 0, 7]


def test_the_refused_cases_give_no_values(res):
    # refused before any thread runs (on gpusim, and by numba-cuda's compiler on a GPU)
    for key in ("other_length", "even", "type_change", "first_items", "kind_items") + (
            ("plain_helper",) if RECORDED else ()):
        assert key not in res


def test_a_recursive_return_type_is_typed_again_until_it_settles(res):
    # `return 0` (int64) and `return x + f(n - 1, x)` (float64): numba unifies them to float64
    assert value(res, "sums") == [0.5 * i for i in range(12)]


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
    # out[0] is a constant 12; int64 is int; float32 is not float (float64) but is np.float32; (7, 2.5) is a
    # tuple; int64 is none of float, complex, bool, tuple
    assert value(res, "instance_checks") == [12, 1, 0, 1, 1, 0]


@on_gpusim_only
def test_a_branch_isinstance_rules_out_is_typed_first_as_numba_cuda_does(res):
    # first_or_self(5): numba-cuda types b = b[0] for an int64 b before it drops the branch, and cannot
    err = res["errors"]["run_first_items"]
    assert err.startswith("KernelTypeError: a int64 cannot be indexed") and "b = b[0]" in err


def test_a_branch_ruled_out_that_fails_only_on_an_attribute_is_dropped(res):
    # width_or_self(5): b.shape of an int64 is the kind of failure numba-cuda's partial typing gets past
    assert value(res, "width_items") == [5]


@on_gpusim_only
def test_the_drop_in_calls_a_plain_python_helper_as_numbas_simulator_does(res):
    # gpusim.launch refuses it (test_refused_as_on_a_gpu.py); numba's simulator, and so the drop-in, runs it
    assert res["plain_helper"] == [12]


def test_a_value_on_some_paths_and_none_on_others_is_an_optional(res):
    opt = value(res, "optionals")
    assert opt["missing"] == [i % 2 == 1 for i in range(6)]
    assert opt["out"] == [100, -1, 101, -1, 102, -1]
    # first_present(half(i), half(i + 1)): i // 2 where i is even, else (i + 1) // 2
    assert opt["chosen"] == [0, 1, 1, 2, 2, 3]


@on_gpusim_only
def test_none_used_as_a_number_is_a_fault_at_the_line_and_thread(res):
    msg = res["none_as_number"]
    assert msg.startswith("KernelError:") and "Expected int64, got None" in msg
    assert "out[i] = half_if_even(i) + 1" in msg and "thread (1, 0, 0)" in msg
