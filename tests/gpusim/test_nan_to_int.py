"""Float -> integer conversions of NaN, infinities and out-of-range values in a kernel, against the H200.

The expected rows were printed by numba-cuda 0.30.4 on an NVIDIA H200 (2026-12-01) for exactly this kernel and
these inputs: NaN becomes 0 only from a float32 to a 32-bit integer, else the target's top bit; every other
value is truncated and saturated. ``int(x)`` is an int64 (its NaN the top bit), stored to int32 by its low bits.
"""

import numpy as np
import pytest
from numba import cuda

import gpusim

X = [np.nan, np.inf, -np.inf, 3e9, -3e9, 1e20, -1.5, 2.5e19]
I64_MIN, I64_MAX, U64_MAX = -2**63, 2**63 - 1, 2**64 - 1
I32_MIN, I32_MAX, U32_MAX = -2**31, 2**31 - 1, 2**32 - 1
SAT64 = [I64_MAX, I64_MIN, 3000000000, -3000000000, I64_MAX, -1, I64_MAX]
H200 = {  # source type -> (int32, int64, uint32, uint64) as the GPU returned them
    np.float32: ([0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, I32_MAX, -1, I32_MAX],
                 [I64_MIN, *SAT64],
                 [0, U32_MAX, 0, 3000000000, 0, U32_MAX, 0, U32_MAX],
                 [2**63, U64_MAX, 0, 3000000000, 0, U64_MAX, 0, U64_MAX]),
    np.float64: ([I32_MIN, I32_MAX, I32_MIN, I32_MAX, I32_MIN, I32_MAX, -1, I32_MAX],
                 [I64_MIN, *SAT64],
                 [2**31, U32_MAX, 0, 3000000000, 0, U32_MAX, 0, U32_MAX],
                 [2**63, U64_MAX, 0, 3000000000, 0, U64_MAX, 0, U64_MAX]),
}
INT_CALL = ([0, -1, 0, -1294967296, 1294967296, -1, -1, -1], [I64_MIN, *SAT64])  # int(x) into int32, int64


@cuda.jit
def numpy_casts(o32, o64, ou32, ou64, x):
    i = cuda.grid(1)
    if i < x.size:
        o32[i] = np.int32(x[i])
        o64[i] = np.int64(x[i])
        ou32[i] = np.uint32(x[i])
        ou64[i] = np.uint64(x[i])


@cuda.jit
def int_calls(o32, o64, x):
    i = cuda.grid(1)
    if i < x.size:
        o32[i] = int(x[i])
        o64[i] = int(x[i])


@pytest.mark.parametrize("t", [np.float32, np.float64])
def test_numpy_integer_casts_give_what_the_h200_gave(t):
    outs = [np.zeros(8, d) for d in (np.int32, np.int64, np.uint32, np.uint64)]
    gpusim.launch(numpy_casts, 1, 32, [*outs, np.array(X, t)])
    assert [o.tolist() for o in outs] == list(H200[t])


@pytest.mark.parametrize("t", [np.float32, np.float64])
def test_int_of_a_float_is_an_int64_then_its_low_bits(t):
    outs = [np.zeros(8, np.int32), np.zeros(8, np.int64)]
    gpusim.launch(int_calls, 1, 32, [*outs, np.array(X, t)])
    assert [o.tolist() for o in outs] == list(INT_CALL)
