"""libdevice's integer functions, as the PTX instructions they compile to define them.

numba-cuda declares every one on int32/int64 (``u`` functions too): an unsigned function reads its operands'
bits as unsigned and returns its result's bits in the signed type. All arithmetic wraps (two's complement).

* ``hadd``/``uhadd``: ``(x + y) >> 1`` without overflow (rounding down); ``rhadd``/``urhadd``: ``(x + y + 1) >> 1``.
* ``mulhi``/``umulhi``: the high 32 bits of the 64-bit product; ``mul64hi``/``umul64hi`` the high 64 bits of
  the 128-bit product.
* ``mul24``/``umul24``: ``mul24.lo``: the low 32 bits of the product of the operands' low 24 bits (read as
  signed 24-bit values for ``mul24``).
* ``sad``/``usad``: ``|x - y| + z``.
* ``byte_perm(x, y, s)``: byte n of the result is byte ``(s >> 4n) & 7`` of the 8 bytes ``y:x``.
* ``umax``/``umin``/``ullmax``/``ullmin``: unsigned comparisons.
"""

from __future__ import annotations

import numpy as np

from .rounding import done, lanes

_I32, _U32, _I64, _U64 = np.int32, np.uint32, np.int64, np.uint64
_LOW32 = _U64(0xFFFFFFFF)
_HALF = _U64(8 * np.dtype(_U32).itemsize)      # bits in the low half of a 64-bit word


def _wrap32(v):
    """An int64/uint64 vector's low 32 bits as int32."""
    return (np.asarray(v).astype(_U64) & _LOW32).astype(_U32).view(_I32)


def halving_add(x, y, unsigned: bool, round_up: bool):
    (x, y), sc = lanes(x, y)
    if unsigned:
        s = x.view(_U32).astype(_I64) + y.view(_U32).astype(_I64)
    else:
        s = x.astype(_I64) + y.astype(_I64)
    return done(_wrap32((s + int(round_up)) >> 1), sc)


def mulhi(x, y, unsigned: bool):
    (x, y), sc = lanes(x, y)
    if unsigned:
        p = x.view(_U32).astype(_U64) * y.view(_U32).astype(_U64)
        return done(_wrap32(p >> _HALF), sc)
    p = x.astype(_I64) * y.astype(_I64)
    return done(_wrap32(p >> _I64(_HALF)), sc)


def _umul64hi(a, b):
    """High 64 bits of the 128-bit product of two uint64 vectors, from 32-bit halves."""
    a0, a1 = a & _LOW32, a >> _HALF
    b0, b1 = b & _LOW32, b >> _HALF
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> _HALF) + (p01 & _LOW32) + (p10 & _LOW32)
    return p11 + (p01 >> _HALF) + (p10 >> _HALF) + (mid >> _HALF)


def mul64hi(x, y, unsigned: bool):
    (x, y), sc = lanes(x, y)
    a, b = x.view(_U64), y.view(_U64)
    hi = _umul64hi(a, b)
    if not unsigned:            # signed: subtract y where x < 0 and x where y < 0 (mod 2**64)
        hi = hi - np.where(x < 0, b, _U64(0)) - np.where(y < 0, a, _U64(0))
    return done(hi.view(_I64), sc)


def mul24(x, y, unsigned: bool):
    (x, y), sc = lanes(x, y)
    if unsigned:
        a, b = (v.view(_U32).astype(_U64) & _U64(0xFFFFFF) for v in (x, y))
    else:
        a, b = (((v.astype(_I64) & 0xFFFFFF) ^ 0x800000) - 0x800000 for v in (x, y))   # sign-extend bit 23
    return done(_wrap32(a * b), sc)


def sad(x, y, z, unsigned: bool):
    (x, y, z), sc = lanes(x, y, z)
    if unsigned:
        x, y, z = (v.view(_U32).astype(_I64) for v in (x, y, z))
    else:
        x, y, z = (v.astype(_I64) for v in (x, y, z))
    return done(_wrap32(np.abs(x - y) + z), sc)


def byte_perm(x, y, s):
    (x, y, s), sc = lanes(x, y, s)
    t = (y.view(_U32).astype(_U64) << _HALF) | x.view(_U32).astype(_U64)
    sel = s.view(_U32).astype(_U64)
    r = np.zeros(np.broadcast(t, sel).shape, _U64)
    for n in range(4):
        k = (sel >> _U64(4 * n)) & _U64(7)
        r |= ((t >> (k * _U64(8))) & _U64(0xFF)) << _U64(8 * n)
    return done(_wrap32(r), sc)


def unsigned_extreme(x, y, which: str):
    (x, y), sc = lanes(x, y)
    ut = _U32 if x.dtype.itemsize == 4 else _U64
    f = np.maximum if which == "max" else np.minimum
    return done(f(x.view(ut), y.view(ut)).view(x.dtype), sc)
