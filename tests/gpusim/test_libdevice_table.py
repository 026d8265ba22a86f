"""Every function of numba-cuda's libdevice table (``numba/cuda/libdevicefuncs.py``, read here, not copied)
is either computed by gpusim with numba-cuda's exact signature, or refused with a stated reason; and each one
gpusim computes runs in a kernel and gives results of the declared types."""

from __future__ import annotations

import numpy as np
import pytest
from libdevice_cases import SIGNATURES, inputs, kernels, outputs

import gpusim
from gpusim import KernelCompileError
from gpusim.frontend.libdevice import FUNCTIONS, REFUSED
from gpusim.ir.types import Tuple
from gpusim.runtime import libdevice as runtime


def _dtypes(t) -> tuple[np.dtype, ...]:
    return tuple(x.dtype for x in t.items) if isinstance(t, Tuple) else (t.dtype,)


def test_every_function_is_computed_with_numba_cudas_signature_or_refused_with_a_reason():
    assert len(SIGNATURES) == 317                       # numba-cuda 0.30.4's table
    missing = sorted(set(SIGNATURES) - set(FUNCTIONS) - set(REFUSED))
    assert missing == []
    assert set(FUNCTIONS) | set(REFUSED) <= set(SIGNATURES), "gpusim names a function numba-cuda does not have"
    assert not set(FUNCTIONS) & set(REFUSED)
    for name, (what, params, ret) in FUNCTIONS.items():
        want_params, want_rets = SIGNATURES[name]
        assert tuple(p.dtype for p in params) == want_params, name
        assert _dtypes(ret) == want_rets, name
        if what.startswith("libdevice."):
            assert what[10:] in runtime.FUNCTIONS, name


COMPUTED = sorted(FUNCTIONS)


@pytest.mark.slow
def test_every_computed_function_runs_in_a_kernel_with_the_declared_result_types(tmp_path):
    ks = kernels(COMPUTED, tmp_path)
    for name in COMPUTED:
        args = inputs(name, 64)
        outs = outputs(name, 64)
        report = gpusim.launch(ks[name], 2, 32, outs + args)
        assert report.faults == [], name
        assert [o.dtype for o in outs] == list(SIGNATURES[name][1])


def test_nothing_is_refused_now_and_a_refusal_would_say_why(monkeypatch, tmp_path):
    assert REFUSED == {}
    monkeypatch.setitem(REFUSED, "j0f", "a reason the user reads")
    k = kernels(["j0f"], tmp_path)
    with pytest.raises(KernelCompileError, match=r"cuda.libdevice.j0f is not supported by gpusim \(a reason"):
        gpusim.launch(k["j0f"], 1, 1, outputs("j0f", 1) + inputs("j0f", 1))


def test_libdevice_work_is_counted_as_the_instruction_it_compiles_to(tmp_path):
    """fadd_rd is an add, fmaf_rz an fma, fdiv_ru a division, expf special-function work; a conversion or
    an integer function is no floating-point work at all (as Nsight Compute counts them)."""
    names = ["fadd_rd", "fmaf_rz", "fdiv_ru", "fsqrt_rz", "erfinvf", "float2int_rn", "double2float_rd"]
    ks = kernels(names, tmp_path)
    counts = {}
    for name in names:
        r = gpusim.launch(ks[name], 1, 40, outputs(name, 40) + inputs(name, 40))
        counts[name] = r.flops
    assert counts["fadd_rd"] == {"float32": {"add": 40}}
    assert counts["fmaf_rz"] == {"float32": {"fma": 40}}
    assert counts["fdiv_ru"] == {"float32": {"div": 40}}
    assert counts["fsqrt_rz"] == counts["erfinvf"] == {"float32": {"special": 40}}
    assert counts["float2int_rn"] == counts["double2float_rd"] == {}
