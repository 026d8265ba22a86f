"""Enum members, ``raise``, grid sync and the drop-in's hazard policy, run through the drop-in
(GPUSIM_CUDASIM=strict).

The kernels are in cudasim_features.py, run in a child process (numba's simulator replaces numba.cuda when
imported). Expected values are Python's rules for enums (numba-cuda follows them: members compare by identity,
an IntEnum member is its int), numba's simulator's wording of a kernel's exception (``tid=[..] ctaid=[..]:
message``), and a hand computation of the grid-synchronised kernel; never gpusim's output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _child(out: Path, **env_extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSIM_CUDASIM", "NUMBA_ENABLE_CUDASIM"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env.update(GPUSIM_CUDASIM="strict", NUMBA_ENABLE_CUDASIM="1", **env_extra)
    return subprocess.run([sys.executable, str(HERE / "cudasim_features.py"), str(out)], env=env,
                          capture_output=True, text=True, timeout=300)


def _run(tmp_path: Path) -> dict:
    out = tmp_path / "res.json"
    proc = _child(out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(out.read_text())
    res["stderr"] = proc.stderr
    return res


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("features"))


def test_every_launch_ran_on_gpusim(res):
    assert res["stats"]["fallback"] == 0
    assert res["stats"]["gpusim"] >= 10


def test_enum_members_compare_by_identity_within_their_class(res):
    # [==, !=, is, is not, Level.error + 1, Level.error == Level.error]
    assert res["enum_same"] == [1, 0, 1, 0, 41, 1]        # Suit.trumps is an alias of Suit.spades
    assert res["enum_other"] == [0, 1, 0, 1, 41, 1]
    assert res["enum_classes"] == [0, 1, 0, 1, 41, 1]     # equal values, different classes


def test_enum_members_from_globals_subscripts_and_device_functions(res):
    assert res["enum_globals"] == [[1, 1], [1, 0], [0, 1], [30, 30]]


def test_raise_in_a_device_function_reaches_the_host_as_the_exception_raised(res):
    got = res["raise_device"]
    assert got["types"][0] == "Overdrawn"
    assert got["message"] == "tid=[2, 0, 0] ctaid=[0, 0, 0]: over the limit"   # a[2] is the negative one
    assert res["raise_none"]["types"] == [] and res["raise_none_out"] == [3.0, 1.0, 2.0, 5.0]
    bare = res["raise_bare"]
    assert bare["types"][0] == "KeyError" and "tid=[0, 0, 0] ctaid=[0, 0, 0]" in bare["message"]


def test_grid_sync_orders_every_block_and_is_not_a_race(res):
    cols = 128
    rows = [[0] * cols]
    for _ in range(5):
        rows.append([v + 1 for v in reversed(rows[-1])])
    assert res["grid_rows"] == rows
    kinds = {(name.split(" ")[0].strip("'"), kind) for name, kind, _ in res["reported"]}
    assert ("reverse_rows", "race") not in kinds


def test_a_grid_synchronised_launch_is_as_large_as_the_gpu_holds_at_once(res):
    # an H200: 132 SMs, each holding at most 2,048 threads in at most 32 blocks
    assert res["coop_blocks"] == [132 * 32, 132 * 8, 132 * 2]
    assert "LaunchError" in res["coop_too_big"]["types"] and "1,057 blocks" in res["coop_too_big"]["message"]


def test_hazards_are_reported_once_per_kernel_and_kind_with_block_thread_and_line(res):
    kinds = {(name.split(" ")[0].strip("'"), kind) for name, kind, _ in res["reported"]}
    assert kinds == {("reverse_rows_unsynced", "race"), ("shared_unwritten", "uninit")}
    for _, _, line in res["reported"]:
        assert "block (0, 0, 0) thread (" in line and "cudasim_features.py:" in line
        assert "GPUSIM_CUDASIM_FAULTS=raise" in line
    assert sum(ln.startswith("gpusim: kernel") for ln in res["stderr"].splitlines()) == 2


def test_hazards_raise_when_the_policy_says_so(tmp_path):
    proc = _child(tmp_path / "res.json", GPUSIM_CUDASIM_FAULTS="raise")
    assert proc.returncode != 0
    assert "DataRace" in proc.stderr and "reverse_rows_unsynced" in proc.stderr


def test_vector_types_are_built_from_numbers_and_smaller_vectors(res):
    # float32x4(swap(x, 2.5), float32x2(7, x)) = (2.5, x, 7, x), x as float32; short2(70000, -3): int16 wraps
    # 70000 to 70000 - 65536 = 4464
    want = [[2.5, float(np.float32(x)), 7.0, float(np.float32(x)), 4464.0, -3.0] for x in (0.1, -4.0)]
    assert res["vectors"] == want


def test_datetime_arithmetic_follows_numpy_with_nat(res):
    d = res["dates"]
    start = np.array(d["start"], dtype="datetime64[D]")
    end = np.array(d["end"], dtype="datetime64[D]")
    assert d["delta"] == (end - start).astype(str).tolist()     # 2024 is a leap year: 4 days; NaT stays NaT
    assert d["later"] == (end > start).tolist()                 # a comparison with NaT is False
    assert d["shifted"] == (start + np.timedelta64(6, "D")).astype(str).tolist()


def test_a_module_object_s_device_functions_and_constants(res):
    assert res["through_module"] == [min(i, 4) for i in range(6)]


def test_a_local_assigned_on_another_path_compiles_and_faults_only_if_read(res):
    assert res["one_path"] == [0, 0, 9]


def test_division_by_zero_raises_only_under_debug(res):
    assert res["ratio_plain"] == [0.5, float("inf")]      # IEEE, as on the GPU without debug
    got = res["ratio_debug"]                              # numba-cuda: ZeroDivisionError; its simulator:
    assert {"ZeroDivisionError", "FloatingPointError"} <= set(got["types"])   # FloatingPointError
    assert got["message"].startswith("tid=[1, 0, 0] ctaid=[0, 0, 0]:")
    assert res["ratio_debug_out"] == [0.0, 0.0]            # the launch stopped: nothing written back
