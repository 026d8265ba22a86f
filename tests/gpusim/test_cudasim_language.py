"""The language numba-cuda's own test suite needs, run through the drop-in (GPUSIM_CUDASIM=strict): values
passed to device functions at compile time, operator-module functions, kernels built by exec or in python -c,
cuda.fp16, int.bit_count, eager-signature conversions, tuple and namedtuple arguments.

Every launch happens in a child process (numba's simulator replaces numba.cuda when imported): the kernels are
in cudasim_language.py. Expected values come from NumPy and numba's documented rules, never from gpusim; with
GPUSIM_LANGUAGE_RESULTS=FILE the same checks read the results cudasim_language.py wrote on a real GPU.
"""

from __future__ import annotations

import cmath
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from dropin_child import dropin_env, run_child

HERE = Path(__file__).resolve().parent


#: a results file cudasim_language.py wrote on a real GPU (run without NUMBA_ENABLE_CUDASIM): the same
#: expectations, checked against the hardware instead of gpusim
RECORDED = os.environ.get("GPUSIM_LANGUAGE_RESULTS")


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    if RECORDED:
        return json.loads(Path(RECORDED).read_text())
    return run_child(HERE / "cudasim_language.py", tmp_path_factory.mktemp("language") / "res.json")


@pytest.mark.skipif(bool(RECORDED), reason="results recorded on a GPU")
def test_every_launch_ran_on_gpusim(res):
    assert res["stats"]["fallback"] == 0 and res["stats"]["fallbacks"] == {}
    assert res["stats"]["gpusim"] == 2 + 1 + 6 + 1 + 3 + 2 + 3 + 1 + 2 + 1 + 2 + 1 + 1 + 1


def test_an_intrinsic_a_dtype_a_shape_and_a_device_function_pass_to_a_device_function(res):
    want = np.bincount(np.array(res["bins"]) % 16, minlength=16)
    assert res["histogram"] == want.tolist()
    assert res["histogram_cast"] == want.tolist()
    assert res["row_max"] == np.array(res["tile"], dtype=np.float32).max(axis=1).tolist()


def test_operator_functions_through_a_variable_are_the_operators(res):
    x, y = np.linspace(1.0, 4.0, 8), np.linspace(0.5, 2.0, 8)
    assert res["op_add"] == (x + y).tolist()
    assert res["op_sub"] == (x - y).tolist()
    assert res["op_mul"] == (x * y).tolist()
    assert res["op_truediv"] == (x / y).tolist()
    assert res["op_floordiv"] == (x // y).tolist()
    assert res["op_lt"] == (x < y).astype(float).tolist()


def test_a_kernel_built_by_exec_runs(res):
    assert res["scaled_copy"] == (np.linspace(1.0, 4.0, 8) * 3.0).tolist()


def test_fp16_intrinsics_compute_in_half_precision(res):
    h = np.float16
    a, b = h(3.1415926), h(2.5)
    want = [a + b, a - b, a * h(2), a / b, -a, b, h(float(a) * float(b) + float(a)), max(a, b), min(a, b),
            h(np.sqrt(np.float32(b)))]
    assert res["half_ops"] == [float(v) for v in want]
    assert res["half_compare"] == [True, False, True, True]
    assert res["half_nan_max"] == [1.25, 1.25]


def test_bit_count_and_an_int_wrapped_to_the_signature(res):
    assert res["bit_counts"] == [bin(w).count("1") for w in res["words"]]
    assert res["clz_wrapped"] == [0]  # 0xFFFFFFFF as an int32 is -1: no leading zeros


def test_tuple_and_namedtuple_arguments(res):
    assert res["tuple_args"] == [7.0, 6.0, 2.0]
    assert res["arrays_in_tuple"] == (np.arange(6.0) + 1).tolist()
    assert res["affine"] == (np.arange(6.0) * 2.0 - 1.0).tolist()


def test_complex_arithmetic_cmath_and_parts_follow_numpy(res):
    z = np.array([complex(*p) for p in res["complex_in"]["z"]], dtype=np.complex64)
    w = np.array([complex(*p) for p in res["complex_in"]["w"]])
    parts = np.array(res["complex_in"]["parts"])
    a = z.astype(np.complex128) * w + 1j
    want = np.stack([np.conjugate(a) / (w + 2), np.sqrt(z).astype(np.complex128) + np.exp(w),
                     (parts[:, 0] + 1j * parts[:, 1]) ** 2, w ** 0.5], axis=1)
    got = np.array([[complex(*c) for c in row] for row in res["complex_out"]])
    # cmath.sqrt of a complex64 is computed in single precision, as numba-cuda does
    np.testing.assert_allclose(got, want, rtol=1e-6)
    got_parts = np.array(res["complex_parts"])
    np.testing.assert_allclose(got_parts[:, 0], np.abs(a), rtol=1e-12)
    assert got_parts[:, 1].tolist() == (z.imag.astype(np.float64) - w.real).tolist()
    np.testing.assert_allclose(got_parts[:, 2], np.angle(z), rtol=1e-6)


def test_numpy_ufuncs_on_numbers_and_over_whole_arrays(res):
    u = res["ufuncs_whole"]
    a, b = np.array(u["a"], dtype=np.float32), np.array(u["b"], dtype=np.float32)
    assert u["s"] == np.arctan2(a, b).tolist()            # NumPy's float32 loop, as numba-cuda picks it
    assert u["t"] == np.less(a, b).tolist()
    assert u["m"] == np.maximum(a, np.float32(0.25)).tolist()
    assert res["ufunc_scalar"] == (np.fmax(np.arange(4.0), 1.5) + np.left_shift(3, 1)).tolist()


def test_for_over_arrays_tuples_enumerate_and_zip(res):
    x, y, weights = np.arange(5.0), np.arange(4.0) * 2, (0.5, 1.5, 2.5)
    want = sum(i * a + b for i, (a, b) in enumerate(zip(x, y))) + x.sum() + sum(k * w for k, w in enumerate(weights))
    assert res["iterate"] == [want]


def _numba_round(x: float, nd: int) -> float:
    """numba-cuda's round(x, ndigits) (cudaimpl.round_to_impl), in float64: scale, round half to even, scale
    back; it differs from CPython's correctly rounded round() where the scaled value is exactly halfway."""
    if math.isinf(x) or math.isnan(x):
        return x
    pow1 = 10.0 ** nd
    y = x * pow1
    if math.isinf(y):
        return x
    z = float(round(y))
    if abs(y - z) == 0.5:
        z = 2.0 * round(y / 2.0)
    return z / pow1


def test_round_to_ndigits_follows_numba(res):
    assert res["round_f4"] == [float(np.float32(_numba_round(float(np.float32(0.3425)), 3)))]
    assert res["round_f4"] == [float(np.float32(0.343))]
    xs = [2.675, 1234.5, -2.5, 0.125, 1e300]
    assert res["round_f8"] == [_numba_round(x, 2) for x in xs]
    assert res["round_f8"][0] == 2.68          # 2.675 * 100 is exactly 267.5 in float64: half to even, 268


def test_a_tuple_spreads_into_a_builtins_arguments(res):
    want = [complex(*cmath.polar(z)) for z in (3 + 4j, -1j, -2.0)]
    assert res["polar_parts"] == [[w.real, w.imag] for w in want]


def test_a_local_literal_is_a_shared_array_shape(res):
    assert res["reverse_in_shared"] == np.arange(16, dtype=np.float32)[::-1].tolist()


def test_intenum_members_are_their_ints(res):
    assert res["status_offsets"] == [300, 400, 0, 96]   # 100 + 200, 200 + 200, 404 - 404, 500 - 404


@pytest.mark.skipif(bool(RECORDED), reason="results recorded on a GPU")
def test_a_kernel_in_python_c_prints_through_gpusim():
    code = textwrap.dedent("""\
        from numba import cuda
        import gpusim.cudasim

        @cuda.jit
        def show(pair):
            print(cuda.threadIdx.x, pair[0], pair[1])

        show[1, 3]((7, 9))
        assert gpusim.cudasim.stats().gpusim_launches == 1
        """)
    proc = subprocess.run([sys.executable, "-c", code], env=dropin_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [f"{t} 7 9" for t in range(3)]
