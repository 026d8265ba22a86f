"""libdevice's conversions, as the PTX ``cvt`` instructions they are define them.

* float -> integer (``float2int_rn``, ``double2ull_rz``, ...): rounded to an integer by the mode (``rni``
  to nearest even, ``rzi`` toward zero, ``rmi`` down, ``rpi`` up), then saturated to the destination's range
  (a negative value gives 0 for an unsigned destination). NaN gives 0 from a float32 to a 32-bit integer, and
  the destination's top bit alone (0x80000000, 0x8000000000000000: signed or not) from a float64 or to a
  64-bit integer: what the H200 returns (tests/gpusim/data/libdevice_h200.npz). numba-cuda types the unsigned
  results as int32/int64: the same bits.
* integer -> float and float64 -> float32 (``ll2float_rd``, ``double2float_ru``, ...): the exact value
  rounded by the mode (``gpusim.runtime.libdevice.rounding``). An int64 is split into two parts that float64
  holds exactly; their TwoSum is the exact value.
* reinterpretations (``float_as_int``, ``double2hiint``, ``hiloint2double``, ...): the same bits.
* ``float2half_rn``: the float16 nearest (ties to even) as its int16 bits; ``half2float`` the other way.
"""

from __future__ import annotations

import numpy as np

from ...ir.values import nan_to_int
from .rounding import F32, F64, done, lanes, round_pair_to_f32, step, two_sum

_ROUND = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}
#: destination name -> (signed type, unsigned?, bits)
_INTS = {name: (t, unsigned, 8 * np.dtype(t).itemsize) for name, t, unsigned in
         (("int", np.int32, False), ("uint", np.int32, True), ("ll", np.int64, False), ("ull", np.int64, True))}
_HALF = 8 * np.dtype(np.uint32).itemsize       # bits in each half of a float64


def float_to_int(x, dest: str, mode: str):
    """``cvt.r?i.{s,u}{32,64}.f{32,64}``: rounded by ``mode``, saturated, NaN as the module says; returned
    as the signed type numba-cuda declares (an unsigned result keeps its bits)."""
    (x,), sc = lanes(x)
    t, unsigned, bits = _INTS[dest]
    with np.errstate(all="ignore"):
        f = _ROUND[mode](x.astype(F64))
        lo, hi = (0.0, 2.0 ** bits) if unsigned else (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1))
        ut = np.uint32 if t == np.int32 else np.uint64
        top = ut(np.iinfo(ut).max) if unsigned else t(np.iinfo(t).max)
        bottom = ut(0) if unsigned else t(np.iinfo(t).min)
        inside = (f >= lo) & (f < hi)
        kind = ut if unsigned else t
        v = np.where(inside, np.where(inside, f, 0.0).astype(kind), np.where(f >= hi, top, bottom))
        nan = nan_to_int(x.dtype, np.dtype(kind))
        v = np.where(np.isnan(f), nan, v).astype(kind)
    return done(v.view(t) if unsigned else v, sc)


def _int_parts(x, unsigned: bool, bits: int):
    """Two float64 values whose exact sum is the integer ``x`` (read as unsigned where ``unsigned``)."""
    if x.dtype == np.int32:
        v = x.view(np.uint32) if unsigned else x
        return v.astype(F64), np.zeros(v.shape, F64)
    if unsigned:
        u = x.view(np.uint64)
        return (u & np.uint64(0xFFFFFFFF00000000)).astype(F64), (u & np.uint64(0xFFFFFFFF)).astype(F64)
    low = x & np.int64(0xFFFFFFFF)
    return (x - low).astype(F64), low.astype(F64)


def int_to_float(x, source: str, dest: str, mode: str):
    """``cvt.r?.f{32,64}.{s,u}{32,64}``: the integer's exact value rounded by ``mode``."""
    (x,), sc = lanes(x)
    _, unsigned, bits = _INTS[source]
    hi, lo = _int_parts(x, unsigned, bits)
    s, e = two_sum(hi, lo)
    out = step(s, e, mode) if dest == "double" else round_pair_to_f32(s, e, mode)[0]
    return done(out, sc)


def double_to_float(x, mode: str):
    (x,), sc = lanes(x)
    with np.errstate(all="ignore"):
        r = x.astype(F32)
        out = step(r, x - r.astype(F64), mode)
    return done(out, sc)


def bits_as(x, t):
    (x,), sc = lanes(x)
    return done(x.view(t), sc)


def double2hiint(x):
    (x,), sc = lanes(x)
    return done((x.view(np.int64) >> np.int64(_HALF)).astype(np.int32), sc)


def double2loint(x):
    (x,), sc = lanes(x)
    return done((x.view(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32), sc)


def hiloint2double(hi, lo):
    (hi, lo), sc = lanes(hi, lo)
    u = (hi.view(np.uint32).astype(np.uint64) << np.uint64(_HALF)) | lo.view(np.uint32).astype(np.uint64)
    return done(u.view(F64), sc)


def float2half_rn(x):
    (x,), sc = lanes(x)
    with np.errstate(all="ignore"):
        h = x.astype(np.float16).view(np.int16)
    return done(np.where(np.isnan(x), np.int16(0x7FFF), h).astype(np.int16), sc)


def half2float(x):
    (x,), sc = lanes(x)
    return done(x.view(np.float16).astype(F32), sc)
