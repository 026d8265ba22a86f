"""When numba-cuda drops the branch an ``isinstance`` rules out, and when it types it first and refuses the
function (gpusim.frontend.instance_checks): gpusim compiles exactly the cases numba-cuda 0.30.4 compiles.

The expected answers are numba-cuda's own, from its compiler (cudasim_isinstance_cases.py: typing and lowering
need no GPU), recorded in its ``CASES`` and checked again here where numba-cuda's compiler runs; the case the
H200 was given (first_or_self on an int64) agrees with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import gpusim
from gpusim.faults import KernelCompileError

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cudasim_isinstance_cases as cases  # noqa: E402

ARGS = {"int": (5,), "tuple": ((7, 2),), "int, int": (5, 1)}


def _compiles_on_gpusim(name: str, kind: str) -> tuple[bool, str]:
    device = cuda.jit(device=True)(getattr(cases, name))
    args = ARGS[kind]
    if len(args) == 1:
        def kernel(out, a):
            out[0] = device(a)
    else:
        def kernel(out, a, b):
            out[0] = device(a, b)
    try:
        gpusim.launch(kernel, 1, 1, (np.zeros(1),) + args, instrument=False, trace=False)
    except KernelCompileError as e:
        return False, str(e)
    return True, ""


@pytest.mark.parametrize(("name", "kind", "numba_cuda"), cases.CASES, ids=[f"{n}-{k}" for n, k, _ in cases.CASES])
def test_gpusim_compiles_what_numba_cuda_compiles(name, kind, numba_cuda):
    compiled, why = _compiles_on_gpusim(name, kind)
    assert compiled == numba_cuda, why


def test_a_refusal_says_numba_cuda_types_the_branch_and_where():
    _, why = _compiles_on_gpusim("first_or_self", "int")
    assert "a int64 cannot be indexed: numba-cuda types this branch although isinstance() rules it out" in why
    assert "b = b[0]" in why
    _, why = _compiles_on_gpusim("assigned_in_a_branch", "int, int")
    assert 'isinstance() cannot determine the type of variable "b" due to a branch' in why


@pytest.mark.slow
def test_the_recorded_answers_are_numba_cudas_compilers():
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "GPUSIM_CUDASIM")}
    proc = subprocess.run([sys.executable, str(HERE / "cudasim_isinstance_cases.py")], env=env, cwd=HERE,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.skip(f"numba-cuda's compiler does not run here: {proc.stderr.strip().splitlines()[-1:]}")
    live = [tuple(line.split("\t")) for line in proc.stdout.splitlines()]
    assert live == [(n, k, str(c)) for n, k, c in cases.CASES]
