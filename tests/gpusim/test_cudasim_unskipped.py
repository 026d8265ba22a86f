"""What numba-cuda's un-skipped tests needed of the drop-in, on kernels of our own (cudasim_unskipped.py, run in
a child process under GPUSIM_CUDASIM=strict): a barrier skipped only by threads leaving the kernel, eager
signatures type-checked at cuda.jit, cuda.random's host-side set-up, CPointer parameters, the step budget.

Expected values are hand counts, numba's own messages and numba-cuda's own generator set-up (its loop, run
in the child), never gpusim's output. The rule for barriers is also checked on gpusim.launch directly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import gpusim
from gpusim.backends.lanes.barriers import skipped_only_by_exiting
from gpusim.cudasim.policy import FaultPolicy
from gpusim.faults import BarrierDivergence

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _run(group: str, out: Path, **env_extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSIM_CUDASIM", "NUMBA_ENABLE_CUDASIM"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env.update(GPUSIM_CUDASIM="strict", NUMBA_ENABLE_CUDASIM="1", **env_extra)
    return subprocess.run([sys.executable, str(HERE / "cudasim_unskipped.py"), group, str(out)], env=env,
                          capture_output=True, text=True, timeout=300)


def _child(group: str, tmp_path: Path, **env_extra: str) -> tuple[dict, str]:
    out = tmp_path / "res.json"
    proc = _run(group, out, **env_extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stderr


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One child for every group that needs no setting of its own."""
    return _child("barriers,eager,random,pointers", tmp_path_factory.mktemp("unskipped"))


# -- a barrier skipped only on the way out ------------------------------------------------------------------

def test_a_grid_barrier_skipped_by_threads_leaving_runs_and_is_reported(run):
    res, err = run
    # flags 1 1 0 0 0 1 0 0: runs start at 0, 2, 5, 6
    assert res["runs"] == [0, 0, 2, 2, 2, 5, 6, 6]
    kinds = {(name.split(" ")[0].strip("'"), kind) for name, kind, _ in res["reported"]}
    assert ("mark_run_starts", "skipped") in kinds
    assert "GPUSIM_CUDASIM_FAULTS=raise" in err
    # the threads that skip it write afterwards: still a divergent barrier, raised
    more = res["sync_then_more"]
    assert "BarrierDivergence" in more["types"] and "grid.sync() reached by only 3 of the grid's 8" in more["message"]


def test_a_barrier_skipped_by_threads_leaving_raises_when_the_policy_says_so(tmp_path):
    proc = _run("barriers", tmp_path / "o.json", GPUSIM_CUDASIM_FAULTS="skipped=raise")
    assert proc.returncode != 0 and "BarrierDivergence" in proc.stderr
    assert "grid.sync() reached by only 4 of the grid's 8 live threads" in proc.stderr


def test_the_policy_tells_a_skipped_barrier_from_a_divergent_one():
    p = FaultPolicy.parse(None)
    assert p.action(BarrierDivergence("x", skipped_by_exiting=True)) == "report"
    assert p.action(BarrierDivergence("x")) == "raise"
    assert FaultPolicy.parse("raise").action(BarrierDivergence("x", skipped_by_exiting=True)) == "raise"
    assert FaultPolicy.parse("divergence=off").action(BarrierDivergence("x", skipped_by_exiting=True)) == "report"


def _last_if_sync(out, flags):
    i = cuda.threadIdx.x
    if flags[i] != 0:
        out[i] = 1
        cuda.syncthreads()
        out[i] = 2


def _sync_in_loop(out, flags):
    i = cuda.threadIdx.x
    for _ in range(2):
        if flags[i] != 0:
            cuda.syncthreads()
    out[i] = 3


def _sync_with_else(out, flags):
    i = cuda.threadIdx.x
    if flags[i] != 0:
        cuda.syncthreads()
    else:
        out[i] = 4


@pytest.mark.parametrize("kernel, leaving, want", [
    (_last_if_sync, True, [2, 0, 2, 0]),   # threads 1 and 3 do nothing after skipping it
    (_sync_in_loop, False, [3, 3, 3, 3]),  # a skipping thread goes round again
    (_sync_with_else, False, [0, 4, 0, 4]),  # the skipping threads write in the other branch
])
def test_gpusim_marks_only_barriers_whose_skippers_leave(kernel, leaving, want):
    out = np.zeros(4, np.int64)
    rep = gpusim.launch(kernel, 1, 4, (out, np.array([1, 0, 1, 0], np.int64)))
    faults = [f for f in rep.faults if isinstance(f, BarrierDivergence)]
    assert len(faults) == 1 and faults[0].skipped_by_exiting is leaving
    assert out.tolist() == want


def test_the_rule_is_syntactic_over_the_kernel_only():
    from gpusim.frontend.compiler import compile_module
    from gpusim.launch import arg_type

    args = (np.zeros(4, np.int64), np.zeros(4, np.int64))
    sig = tuple(arg_type(a, n) for a, n in zip(args, ("out", "flags")))
    for kernel, count in ((_last_if_sync, 1), (_sync_in_loop, 0), (_sync_with_else, 0)):
        fn = compile_module(kernel, sig).entry
        assert len(skipped_only_by_exiting(fn)) == count


# -- eager signatures ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def eager(run):
    return run[0]


@pytest.mark.parametrize("case, words", [("float_mask", "Mask type must be an integer"),
                                         ("bool_mask", "Mask type must be an integer"),
                                         ("float_predicate", "Predicate must be an integer or boolean")])
def test_a_wrongly_typed_vote_is_numbas_typing_error_at_cuda_jit(eager, case, words):
    got = eager[f"eager_{case}"]
    assert got["types"][0] == "TypingError" and words in got["message"]
    assert eager[f"eager_{case}_both"] is True     # numba's and numba-cuda's TypingError both catch it


def test_a_well_typed_eager_vote_runs(eager):
    one_false, all_true = eager["eager_valid"]
    assert one_false == [0] * 32 and all_true == [1] * 32


# -- cuda.random's generators --------------------------------------------------------------------------------

def test_the_generators_are_numba_cudas_own_states_bit_for_bit(run):
    res, _ = run
    assert res["states_replaced"] is True
    for key in ("states_12_42_0", "states_5_1_3"):
        assert res[key]["dropin"] == res[key]["numba"]
    # splitmix64(42) seeds the first state, in both words (numba-cuda's init_xoroshiro128p_state)
    assert res["states_12_42_0"]["numba"][0] == [13679457532755275413, 13679457532755275413]


# -- CPointer parameters -------------------------------------------------------------------------------------

def test_a_pointer_from_the_array_interface_is_the_memory_it_points_into(run):
    res, _ = run
    assert res["cai"] == {"shape": [8], "typestr": "<f4", "version": 3}
    assert res["pointer_offset"] == [0, 0, 0, 0, 1, 2, 3, 4]
    past = res["pointer_past_end"]          # from element 6, thread 2 writes element 8 of 8
    assert "OutOfBounds" in past["types"] and "IndexError" in past["types"]
    unknown = res["pointer_unknown"]
    assert "LaunchError" in unknown["types"] and "does not point into a device array" in unknown["message"]


# -- the step budget -----------------------------------------------------------------------------------------

def test_the_step_budget_is_set_by_the_environment(tmp_path):
    res, _ = _child("budget", tmp_path, GPUSIM_CUDASIM_MAX_STEPS="1_000_000")
    long = res["budget_long"]
    assert "KernelTimeout" in long["types"] and "1,000,000 steps" in long["message"]
    assert any("GPUSIM_CUDASIM_MAX_STEPS" in n for n in long["notes"])
    assert res["budget_short"]["types"] == [] and res["budget_short_out"] == 45


def test_the_budget_grows_with_the_launchs_threads(tmp_path):
    res, _ = _child("budget_scaled", tmp_path)
    for blocks in (1, 64):
        assert res[f"scaled_short_{blocks}"]["types"] == []
        long = res[f"scaled_long_{blocks}"]
        assert "KernelTimeout" in long["types"] and f"{blocks * 64 * 10_000:,} steps" in long["message"]


def test_the_budget_is_the_larger_of_its_floor_and_its_allowance_per_thread(monkeypatch):
    from gpusim.cudasim import budget

    monkeypatch.delenv("GPUSIM_CUDASIM_MAX_STEPS", raising=False)
    assert budget.for_launch(1) == budget.MAX_STEPS == 40_000_000_000
    assert budget.for_launch(2_097_152) == 2_097_152 * 250_000     # numba-cuda's test_random's launch
    monkeypatch.setenv("GPUSIM_CUDASIM_MAX_STEPS", "2e6")
    assert budget.for_launch(1) == budget.for_launch(2_097_152) == 2_000_000


def test_the_drop_ins_budget_outlasts_gpusim_launchs_and_a_bad_setting_is_said(tmp_path):
    res, err = _child("budget_default", tmp_path, GPUSIM_CUDASIM_MAX_STEPS="lots")
    assert res["budget_default"]["types"] == []
    assert res["budget_default_out"] == 300_000 * 299_999 // 2
    assert "GPUSIM_CUDASIM_MAX_STEPS='lots' is not a positive whole number" in err
