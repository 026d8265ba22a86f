"""Enum members in kernels and the drop-in's hazard policy, run through the drop-in (GPUSIM_CUDASIM=strict).

The kernels are in cudasim_features.py, run in a child process (numba's simulator replaces numba.cuda when
imported). Expected values are Python's rules for enums (numba-cuda follows them: members compare by identity,
an IntEnum member is its int), never gpusim's output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _run(tmp_path: Path, **env_extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSIM_CUDASIM", "NUMBA_ENABLE_CUDASIM"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env.update(GPUSIM_CUDASIM="strict", NUMBA_ENABLE_CUDASIM="1", **env_extra)
    out = tmp_path / "res.json"
    proc = subprocess.run([sys.executable, str(HERE / "cudasim_features.py"), str(out)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(out.read_text())
    res["stderr"] = proc.stderr
    return res


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("features"))


def test_every_launch_ran_on_gpusim(res):
    assert res["stats"]["fallback"] == 0
    assert res["stats"]["gpusim"] >= 4


def test_enum_members_compare_by_identity_within_their_class(res):
    # [==, !=, is, is not, Level.error + 1, Level.error == Level.error]
    assert res["enum_same"] == [1, 0, 1, 0, 41, 1]        # Suit.trumps is an alias of Suit.spades
    assert res["enum_other"] == [0, 1, 0, 1, 41, 1]
    assert res["enum_classes"] == [0, 1, 0, 1, 41, 1]     # equal values, different classes


def test_enum_members_from_globals_subscripts_and_device_functions(res):
    assert res["enum_globals"] == [[1, 1], [1, 0], [0, 1], [30, 30]]
