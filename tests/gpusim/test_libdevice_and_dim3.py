"""Valid numba-cuda gpusim used to refuse (issue 11): ``cuda.libdevice.*`` and a dim3 held in a local.

Expected values come from outside gpusim: NumPy's float32 arithmetic (IEEE round to nearest), C's fmax, and
the PTX numba-cuda 0.30.4 emits for sm_90 (``cuda.compile_ptx``): ``fmul_rn(a, b) + c`` is ``mul.rn.f32``
then ``add.f32``, ``fadd_rn(a * b, c)`` is ``mul.f32`` then ``add.rn.f32`` — an instruction with an explicit
rounding mode is never contracted — while ``a * b + c`` is one ``fma.rn.f32``. What numba-cuda refuses
(argument types, a dim3 local that is also an int) is refused here too, before the kernel runs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from libdevice_kernels import bit_functions, dim3_locals, math_functions, rounded_arithmetic
from numba import cuda

import gpusim
from gpusim import KernelCompileError

N = 64


def _floats(seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(N).astype(np.float32) for _ in range(3))



def test_rounded_arithmetic_is_never_contracted_and_fma_is_one_rounding():
    a, b, c = _floats(1)
    out = np.zeros((7, N), np.float32)
    assert gpusim.launch(rounded_arithmetic, 1, N, [out, a, b, c]).faults == []
    product = a * b                                         # float32 product, rounded
    fused = (a.astype(np.float64) * b + c).astype(np.float32)
    assert np.array_equal(out[0], product + c) and np.array_equal(out[1], product + c)
    assert np.array_equal(out[2], fused) and np.array_equal(out[3], fused)
    assert not np.array_equal(fused, product + c), "the data must tell fused from unfused"
    assert np.array_equal(out[4], a / b) and np.array_equal(out[5], np.float32(1) / b)
    assert np.array_equal(out[6], a - np.float32(10))



def test_math_functions_and_c_fmax():
    x, y, _ = _floats(2)
    y[::4] = np.nan
    out = np.zeros((7, N), np.float64)
    assert gpusim.launch(math_functions, 1, N, [out, x, y]).faults == []
    assert np.allclose(out[0], np.exp(x), rtol=1e-6) and np.allclose(out[1], np.exp(x.astype(np.float64)))
    assert np.allclose(out[2], np.arctan2(x, y), rtol=1e-6, equal_nan=True)
    assert np.array_equal(out[3], np.fmax(x, y)) and np.array_equal(out[4], np.fmin(x, y))   # NaN: the other
    assert out[5].tolist() == [1.0 if k % 4 == 0 else 0.0 for k in range(N)]
    assert np.array_equal(out[6], np.sqrt(np.abs(x)))



def test_bit_functions_on_int32():
    v = np.array([0, 1, 6, -1, 2**31 - 1, -(2**31), 1 << 20, 12345], np.int32)
    out = np.zeros((5, v.size), np.int64)
    assert gpusim.launch(bit_functions, 1, v.size, [out, v]).faults == []
    bits = [format(int(x) & 0xFFFFFFFF, "032b") for x in v]
    assert out[0].tolist() == [s.count("1") for s in bits]
    assert out[1].tolist() == [len(s) - len(s.lstrip("0")) for s in bits]
    assert out[2].tolist() == [0 if "1" not in s else 32 - s.rindex("1") for s in bits]
    assert out[3].tolist() == [int(np.uint32(int(s[::-1], 2)).view(np.int32)) for s in bits]
    assert out[4].tolist() == [max(int(x), 7) for x in v]


@cuda.jit
def libdevice_misuse(out, a):
    out[0] = cuda.libdevice.expf(a)


@cuda.jit
def libdevice_unsupported(out, a):
    out[0] = cuda.libdevice.dsub_rd(a[0], a[1])          # libdevice has no dsub: numba-cuda refuses it too


def test_what_numba_cuda_refuses_or_gpusim_lacks_is_a_compile_error():
    with pytest.raises(KernelCompileError, match=r"cuda.libdevice.expf takes \(float32\)"):
        gpusim.launch(libdevice_misuse, 1, 1, [np.zeros(1, np.float32), np.zeros(2, np.float32)])
    with pytest.raises(KernelCompileError, match="cuda.libdevice has no function dsub_rd"):
        gpusim.launch(libdevice_unsupported, 1, 1, [np.zeros(1, np.float32), np.zeros(2, np.float32)])


# --- a dim3 in a local ------------------------------------------------------------------------------------



def test_a_dim3_local_reads_the_threads_own_values():
    out = np.zeros((3, 12), np.int32)
    assert gpusim.launch(dim3_locals, 3, 4, [out]).faults == []
    assert out[0].tolist() == [t for _ in range(3) for t in range(4)]
    assert out[1].tolist() == [b for b in range(3) for _ in range(4)]
    assert out[2].tolist() == [1] * 12


@cuda.jit
def dim3_then_int(out):
    tid = cuda.threadIdx
    if out[0] > 0:
        tid = 3
    out[0] = tid.x


def test_a_local_that_is_a_dim3_on_one_path_only_is_refused():
    """numba-cuda cannot unify a dim3 with an int; gpusim must not pick one of them."""
    with pytest.raises(KernelCompileError):
        gpusim.launch(dim3_then_int, 1, 1, [np.zeros(1, np.int32)])


def test_fmax_of_two_nans_is_nan():
    @cuda.jit
    def both(out):
        out[0] = cuda.libdevice.fmax(math.nan, math.nan)

    out = np.zeros(1, np.float64)
    gpusim.launch(both, 1, 1, [out])
    assert math.isnan(out[0])
