"""Random kernels give the same results before and after the typed IR, through the public API.

tests/gpusim/data/random_kernels_before.json holds 120 kernels of test_lanes_random.py's generator with what
the engine before the typed IR (df0008a) wrote for them, on an int64 and on a float64 input, and the faults
it reported (benchmarks/random_kernels_before.py recorded them). This gpusim must write the same bytes and
report the same faults — except where the old engine ran what numba-cuda rejects: ``range()`` of a float
(the generator passes the float input to ``range``), which is now a compile error at the same line's loop.
The recorded sources call ``dev``, a plain Python function then, which numba-cuda cannot call: it is launched
as a ``@cuda.jit(device=True)`` function, the decorator taking one of the blank lines above it (every line where
it was).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from random_kernels_io import launch_one

import gpusim

DATA = json.loads((Path(__file__).parent / "data" / "random_kernels_before.json").read_text())
KERNELS = DATA["kernels"]


def with_device_function(source: str) -> str:
    """``source`` with ``dev`` decorated, on the second of the two blank lines above it."""
    assert "\n\n\ndef dev(" in source
    return source.replace("\n\n\ndef dev(", "\n\n@cuda.jit(device=True)\ndef dev(", 1)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("before_after")


@pytest.mark.parametrize("n", range(len(KERNELS)))
def test_a_random_kernel_writes_what_the_engine_before_the_ir_wrote(folder, n):
    kernel = KERNELS[n]
    for dtype, before in kernel["results"].items():
        case = dict(kernel, input=dtype, source=with_device_function(kernel["source"]))
        now = launch_one(gpusim, folder, f"after_{n}_{dtype}", case)
        where = f"input {dtype}, {kernel['grid']} x {kernel['block']}:\n{kernel['source']}"
        if "compile_error" in now and "compile_error" not in before:
            assert dtype == "float64" and now["message"].startswith("range() needs integers, not float64"), where
            assert kernel["source"].splitlines()[now["line"] - 1].lstrip().startswith("for "), where
            continue
        assert now == before, where


def test_the_recorded_kernels_are_many_and_do_different_things():
    outputs = {r["sha256"] for k in KERNELS for r in k["results"].values()}
    assert len(KERNELS) >= 100 and len(outputs) >= 100
    assert sum(1 for k in KERNELS if "sha256" in k["results"]["float64"]) >= 100
