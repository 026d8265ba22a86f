"""libdevice's ``fast_*`` functions (CUDA's ``__expf``, ``__logf``, ``__sinf``, ...): the GPU's approximate
instructions (``ex2.approx.f32``, ``lg2.approx.f32``, ``sin.approx.f32``, ``cos.approx.f32``,
``div.approx.f32``) and the float32 arithmetic libdevice wraps around them.

The approximate instructions are not specified bit for bit, so gpusim computes each one accurately (in
float64, rounded once to float32); the float32 steps around them are computed exactly as the GPU does:
``fast_expf(x)`` is ``ex2(x * 1.44269502f)`` with the product rounded to float32, ``fast_logf(x)`` is
``lg2(x) * 0.693147182f``, and so on. That rounded product is where most of the documented error comes from
(CUDA C++ Programming Guide, "Intrinsic Functions": ``__expf`` within ``2 + floor(abs(1.173 * x))`` ulp,
``__exp10f`` within ``2 + floor(abs(2.97 * x))``), so gpusim's results carry the same large-argument error.
``__sinf``/``__cosf`` take the angle as the GPU reduces it (``_turns``). What remains between gpusim and the
GPU is the instructions' own few ulps (``__sinf``/``__cosf``: absolute error 2^-21.41 / 2^-21.19;
``__logf``: 2^-21.41 absolute on [0.5, 2], else 3 ulp; ``__log2f``: 2^-22 absolute on [0.5, 2], else 2 ulp;
``__fdividef``: 2 ulp for 2^-126 <= |y| <= 2^126).
numba-cuda compiles without fast-math unless asked, so subnormals are kept (the non-``ftz`` forms).
"""

from __future__ import annotations

import numpy as np

from .functions import cospi, sinpi
from .rounding import F32, F64, done, fmul, lanes

_LOG2_E = F32(1.44269502)       # 0x3FB8AA3B
_LOG2_10 = F32(3.32192802)      # 0x40549A78
_LN_2 = F32(0.693147182)        # 0x3F317218
_LOG10_2 = F32(0.301029996)     # 0x3E9A209B
_INV_2PI = F32(0.159154937)     # 0x3E22F983


def _f32(x):
    return np.asarray(x).astype(F32)


def _ex2(t):
    with np.errstate(all="ignore"):
        return _f32(np.exp2(np.asarray(t, F64)))


def _lg2(x):
    with np.errstate(all="ignore"):
        return _f32(np.log2(np.asarray(x, F64)))


def _one(f):
    def g(x):
        (x,), sc = lanes(x)
        with np.errstate(all="ignore"):
            return done(_f32(f(x)), sc)
    g.__name__ = f.__name__
    return g


@_one
def fast_expf(x):
    return _ex2(x * _LOG2_E)


@_one
def fast_exp10f(x):
    return _ex2(x * _LOG2_10)


@_one
def fast_log2f(x):
    return _lg2(x)


@_one
def fast_logf(x):
    return _lg2(x) * _LN_2


@_one
def fast_log10f(x):
    return _lg2(x) * _LOG10_2


def _turns(x):
    """The angle ``sin.approx``/``cos.approx`` see, in turns: the GPU multiplies by 1/(2 pi) in float32
    rounding toward zero (``FMUL.RZ`` before ``MUFU.SIN``), and the unit reads the product's fraction as a
    fixed-point number of 25 bits, cut toward zero. Far from 0 the product keeps few fraction bits (at 1e7
    only quarter turns: the H200's ``__sinf(-12187900)`` is -0.7071 where the true sine is 0.19); near 0 an
    angle under 2^-25 turns is 0 (``__sinf(1e-7)`` is 0 there). The unit's own error (~2^-22 absolute) is not
    modelled: against the H200's results the sine is then within 3e-7 (most identical), not 1."""
    t = fmul(x, np.full(x.shape, _INV_2PI, F32), mode="rz").astype(F64)
    return np.trunc((t - np.trunc(t)) * 2.0 ** 25) / 2.0 ** 25


@_one
def fast_sinf(x):
    return sinpi(2 * _turns(x))


@_one
def fast_cosf(x):
    return cospi(2 * _turns(x))


@_one
def fast_tanf(x):
    """sin.approx times the approximate reciprocal of cos.approx."""
    return fast_sinf(x) * _f32(1.0 / fast_cosf(x).astype(F64))


def fast_sincosf(x):
    return fast_sinf(x), fast_cosf(x)


def fast_fdividef(x, y):
    """``div.approx.f32``: x times the reciprocal of y. A subnormal y is scaled up first (x with it), so
    ``0 / 2^-149`` is 0 and ``2^-149 / 2^-149`` is 1; where 2^126 < |y| < 2^128 the result is 0 with the sign
    of x * y (inf x gives NaN): the H200's results."""
    (x, y), sc = lanes(x, y)
    with np.errstate(all="ignore"):
        small = np.abs(y) < F32(2.0 ** -126)
        scale = np.where(small, F32(2.0 ** 24), F32(1))
        x, y = x * scale, y * scale
        r = x * _f32(1.0 / y.astype(F64))
        huge = (np.abs(y) > F32(2.0 ** 126)) & np.isfinite(y)
        r = np.where(huge, x * np.copysign(F32(0), y), r)
    return done(_f32(r), sc)


def fast_powf(x, y):
    """``ex2(y * lg2(x))``, the product rounded to float32."""
    (x, y), sc = lanes(x, y)
    with np.errstate(all="ignore"):
        return done(_ex2(y * _lg2(x)), sc)
