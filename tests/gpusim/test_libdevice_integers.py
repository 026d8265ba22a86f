"""libdevice's integer functions and bit reinterpretations, run in kernels on gpusim, against Python's
unbounded integers and ``struct`` (the definitions: libdevice's user guide and the PTX instructions they
compile to; results are the bits of the 32/64-bit result read back as numba-cuda's signed types)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from libdevice_cases import inputs, kernels, outputs

import gpusim


def _u(x: int, bits: int) -> int:
    return x & ((1 << bits) - 1)


def _s(x: int, bits: int) -> int:
    x = _u(x, bits)
    return x - (1 << bits) if x >> (bits - 1) else x


def _sext24(x: int) -> int:
    return _s(x, 24)


def _byte_perm(x: int, y: int, s: int) -> int:
    data = _u(x, 32) | (_u(y, 32) << 32)
    return sum(((data >> (8 * ((s >> (4 * n)) & 7))) & 0xFF) << (8 * n) for n in range(4))


ORACLES = {
    "hadd": lambda x, y: (x + y) >> 1,
    "rhadd": lambda x, y: (x + y + 1) >> 1,
    "uhadd": lambda x, y: (_u(x, 32) + _u(y, 32)) >> 1,
    "urhadd": lambda x, y: (_u(x, 32) + _u(y, 32) + 1) >> 1,
    "mulhi": lambda x, y: (x * y) >> 32,
    "umulhi": lambda x, y: (_u(x, 32) * _u(y, 32)) >> 32,
    "mul64hi": lambda x, y: (x * y) >> 64,
    "umul64hi": lambda x, y: (_u(x, 64) * _u(y, 64)) >> 64,
    "mul24": lambda x, y: _sext24(x) * _sext24(y),
    "umul24": lambda x, y: _u(x, 24) * _u(y, 24),
    "sad": lambda x, y, z: abs(x - y) + z,
    "usad": lambda x, y, z: abs(_u(x, 32) - _u(y, 32)) + _u(z, 32),
    "byte_perm": _byte_perm,
    "umax": lambda x, y: max(_u(x, 32), _u(y, 32)),
    "umin": lambda x, y: min(_u(x, 32), _u(y, 32)),
    "ullmax": lambda x, y: max(_u(x, 64), _u(y, 64)),
    "ullmin": lambda x, y: min(_u(x, 64), _u(y, 64)),
}


@pytest.fixture(scope="module")
def ks(tmp_path_factory):
    names = list(ORACLES) + list(BITS)
    return kernels(names, tmp_path_factory.mktemp("integers"))


def _run(ks, name, args):
    outs = outputs(name, args[0].size)
    assert gpusim.launch(ks[name], (args[0].size + 127) // 128, 128, outs + list(args)).faults == []
    return outs


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_integer_functions_match_their_definitions_on_unbounded_integers(ks, name):
    args = inputs(name)
    (r,) = _run(ks, name, args)
    bits = 8 * r.itemsize
    want = [_s(ORACLES[name](*(int(a[k]) for a in args)), bits) for k in range(r.size)]
    assert r.tolist() == want


def _f32_bits(x: float) -> int:
    return struct.unpack("<i", struct.pack("<f", x))[0]


def _f64_bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


#: bit reinterpretations: name -> (result from one input, compared as bits)
BITS = {
    "float_as_int": lambda x: _f32_bits(x),
    "double_as_longlong": lambda x: _f64_bits(x),
    "double2hiint": lambda x: _s(_f64_bits(x) >> 32, 32),
    "double2loint": lambda x: _s(_f64_bits(x), 32),
    "int_as_float": lambda i: i,                        # the same bits (a value conversion would differ)
    "longlong_as_double": lambda i: i,
}


@pytest.mark.parametrize("name", sorted(BITS))
def test_reinterpretations_keep_every_bit(ks, name):
    (x,) = inputs(name)
    x = x[~np.isnan(x)] if x.dtype.kind == "f" else x     # struct may quiet a NaN's payload
    (r,) = _run(ks, name, [x])
    got = r.view(np.int32 if r.itemsize == 4 else np.int64).tolist()
    want = [BITS[name](x[k].item()) for k in range(x.size)]
    assert got == want


def test_hiloint2double_joins_the_halves(tmp_path):
    k = kernels(["hiloint2double", "float2half_rn", "half2float"], tmp_path)
    hi = np.array([0x3FF00000, -0x40000000, 0x7FF00000, 0, -1], np.int32)
    lo = np.array([0, 0, 0, 1, -1], np.int32)
    (r,) = _run(k, "hiloint2double", [hi, lo])
    assert r[:4].tolist() == [1.0, -2.0, np.inf, 5e-324] and np.isnan(r[4])
    x = np.array([1.0, -2.0, 65504.0, 65520.0, 1e-8, 2.0 ** -24, 3 * 2.0 ** -25, 0.1], np.float32)
    (h,) = _run(k, "float2half_rn", [x])
    assert h.tolist() == [0x3C00, -0x4000, 0x7BFF, 0x7C00, 0, 1, 2, 0x2E66]   # 65520 rounds to inf; ties to even
    (back,) = _run(k, "half2float", [h])
    assert back.tolist() == [1.0, -2.0, 65504.0, np.inf, 0.0, 2.0 ** -24, 2.0 ** -23, np.float32(np.float16(0.1))]
