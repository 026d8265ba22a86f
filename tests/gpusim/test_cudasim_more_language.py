"""More of the language numba-cuda's own test suite needs, run through the drop-in (GPUSIM_CUDASIM=strict):
strings stored into S/U arrays and record fields, recursive device functions, ``isinstance`` on a static
type, a device function returning a value on some paths and None on others, ``alignment=``.

Every launch happens in a child process (numba's simulator replaces numba.cuda when imported): the kernels are
in cudasim_more_language.py. Expected values come from numba's rules and hand counts, never from gpusim.
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


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSIM_CUDASIM", "NUMBA_ENABLE_CUDASIM"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env.update(GPUSIM_CUDASIM="strict", NUMBA_ENABLE_CUDASIM="1")
    return env


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    out = tmp_path_factory.mktemp("more_language") / "res.json"
    proc = subprocess.run([sys.executable, str(HERE / "cudasim_more_language.py"), str(out)], env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


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
