"""libdevice's math functions that the ``math`` module has no counterpart for (``sinpi``, ``erfinv``, ``erfcx``,
``normcdf``, ``rsqrt``, ``logb``, ``remquo``, ...), on lane vectors or NumPy scalars.

libdevice's own algorithms are not published bit for bit; its documented error bounds are a few ulps (CUDA
C++ Programming Guide, "Mathematical Functions"). gpusim computes each function close to the exact value
instead: a float32 function in float64, rounded once; a float64 function with its argument reduced exactly
(``sinpi``), in double-double where a step would lose bits (``normcdf``'s ``x/sqrt(2)``, ``erfcx``'s ``x*x``),
or by Newton's method on the accurate forward function (``erfinv``, ``erfcinv``). Differences from the
GPU are therefore within libdevice's bounds; ``benchmarks/gpu/libdevice_check.py`` measures them.

Special values follow C (and CUDA's documentation): ``ilogb(0)`` and ``ilogb(NaN)`` are INT_MIN,
``ilogb(inf)`` INT_MAX; ``logb(0)`` is -inf; ``erfinv(+-1)`` is +-inf; ``rsqrt(+-0)`` is +-inf.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .rounding import F64, done, lanes, two_prod

_PI_HI = F64(math.pi)
_PI_LO = F64(1.2246467991473532e-16)          # pi - _PI_HI
_INV_SQRT2_HI = F64(0.7071067811865476)
_INV_SQRT2_LO = F64(-4.833646656726457e-17)   # 1/sqrt(2) - _INV_SQRT2_HI
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _in64(x):
    """The arguments in float64, the result type, and whether they are scalars."""
    (x,), sc = lanes(x)
    return x.astype(F64), x.dtype.type, sc


def _back(r, t, sc):
    return done(np.asarray(r).astype(t), sc)


def _each(f, x):
    return np.frompyfunc(f, 1, 1)(x).astype(F64)


def _erfc(x):
    return _each(math.erfc, x)


def _erf(x):
    return _each(math.erf, x)


# ---------------------------------------------------------------------------------------------- pi multiples


def _pi_times(f):
    """sin(pi f) and cos(pi f) for |f| <= 1/4, with pi f carried in double-double."""
    p, e = two_prod(_PI_HI, f)
    lo = e + _PI_LO * f
    s, c = np.sin(p), np.cos(p)
    return s + c * lo, c - s * lo


def sincospi(x):
    """(sin(pi x), cos(pi x)): x reduced exactly to f in [-1/4, 1/4] and a quarter turn n (x = f + n/2)."""
    x64, t, sc = _in64(x)
    with np.errstate(all="ignore"):
        whole = np.abs(x64) >= 2.0 ** 54               # a multiple of 4: a whole number of turns
        n = np.where(whole, 0.0, np.rint(2 * x64))
        f = np.where(whole, 0.0, x64 - n / 2)
        n = np.where(np.isfinite(n), n, 0).astype(np.int64) & 3
        s, c = _pi_times(f)
        sin = np.choose(n, [s, c, -s, -c])
        cos = np.choose(n, [c, -s, -c, s])
        sin = np.where(sin == 0, np.copysign(0.0, x64), sin)    # sinpi(n) is a zero with x's sign
        cos = np.where(cos == 0, 0.0, cos)                      # cospi(n + 1/2) is +0
        bad = ~np.isfinite(x64)
        sin, cos = np.where(bad, np.nan, sin), np.where(bad, np.nan, cos)
    return _back(sin, t, sc), _back(cos, t, sc)


def sinpi(x):
    return sincospi(x)[0]


def cospi(x):
    return sincospi(x)[1]


# ---------------------------------------------------------------------------------------------- error function


def _erfcx_pos(x):
    """exp(x*x) * erfc(x) for x >= 0 (float64): exp of the exact square (double-double) below 25, the
    asymptotic series above (its terms shrink past 1e-16 well before they grow again)."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        h, lo = two_prod(x, x)
        small = np.exp(h) * (1 + lo) * _erfc(np.minimum(x, 25.0))
        inv = 1 / (2 * x * x)
        term = np.ones_like(x)
        total = np.ones_like(x)
        for k in range(1, 12):
            term = term * -(2 * k - 1) * inv
            total = total + term
        large = total / math.sqrt(math.pi) / x                # x * sqrt(pi) would overflow near 1e308
    return np.where(x < 25, small, np.where(np.isinf(x), 0.0, large))


def erfcx(x):
    x64, t, sc = _in64(x)
    with np.errstate(all="ignore"):
        pos = _erfcx_pos(np.abs(x64))
        xc = np.maximum(x64, -27.0)                     # below -26.7 the result overflows anyway
        h, lo = two_prod(xc, xc)
        neg = 2 * np.exp(h) * (1 + lo) - pos
        r = np.where(x64 >= 0, pos, neg)
        r = np.where(np.isnan(x64), np.nan, r)
    return _back(r, t, sc)


def _inverse_erfc(z):
    """x >= 0 with erfc(x) == z, for z in (0, 1]: Newton on log(erfc(x)) = log(erfcx(x)) - x*x, which keeps
    its precision down to the smallest subnormal z."""
    with np.errstate(all="ignore"):
        logz = np.log(z)
        tail = np.sqrt(np.maximum(-logz - 0.5 * np.log(np.maximum(-logz, 1.0)), 0.0))   # erfc ~ exp(-x*x)
        x = np.where(z > 0.5, (1 - z) * math.sqrt(math.pi) / 2, tail)
        for _ in range(60):
            ex = _erfcx_pos(x)
            g = np.log(ex) - x * x - logz
            new = np.maximum(x + g * math.sqrt(math.pi) * ex / 2, 0.0)
            converged = np.all(np.abs(new - x) <= 1e-16 * x)
            x = new
            if converged:
                break
    return x


def _erfinv64(y):
    with np.errstate(all="ignore"):
        a = np.abs(y)
        x = np.where(a <= 0.5, y * math.sqrt(math.pi) / 2, 0.0)
        for _ in range(12):                          # |y| <= 1/2: Newton on erf itself
            new = x - (_erf(x) - y) / (_TWO_OVER_SQRT_PI * np.exp(-x * x))
            converged = np.all(np.abs(new - x) <= 1e-16 * np.abs(x))
            x = new
            if converged:
                break
        far = np.copysign(_inverse_erfc(np.where(a > 0.5, 1 - a, 1.0)), y)
        r = np.where(a <= 0.5, x, far)
        r = np.where(a == 1, np.copysign(np.inf, y), r)
        return np.where((a > 1) | np.isnan(y), np.nan, r)


def erfinv(x):
    x64, t, sc = _in64(x)
    return _back(_erfinv64(x64), t, sc)


def _erfcinv64(z):
    with np.errstate(all="ignore"):
        small = _inverse_erfc(np.where((z > 0) & (z <= 1), z, 1.0))
        big = -_erfinv64(np.where((z > 1) & (z < 2), z - 1, 0.0))
        r = np.where(z <= 1, small, big)
        r = np.where(z == 0, np.inf, np.where(z == 2, -np.inf, r))
        return np.where((z < 0) | (z > 2) | np.isnan(z), np.nan, r)


def erfcinv(x):
    x64, t, sc = _in64(x)
    return _back(_erfcinv64(x64), t, sc)


def normcdf(x):
    """erfc(-x/sqrt(2))/2 with -x/sqrt(2) in double-double (its rounding would cost ~x*x ulps)."""
    x64, t, sc = _in64(x)
    with np.errstate(all="ignore"):
        x64c = np.clip(x64, -60.0, 60.0)                       # past 40 the result is 0 or 1
        h, e = two_prod(-x64c, _INV_SQRT2_HI)
        lo = e - x64c * _INV_SQRT2_LO
        base = _erfc(h)
        corr = lo * _TWO_OVER_SQRT_PI * np.exp(-h * h)      # d erfc = -2/sqrt(pi) exp(-h^2) dh
        r = np.where(np.isfinite(x64), (base - corr) / 2, np.where(x64 > 0, 1.0, np.where(x64 < 0, 0.0, np.nan)))
    return _back(r, t, sc)


def normcdfinv(x):
    x64, t, sc = _in64(x)
    return _back(-math.sqrt(2) * _erfcinv64(2 * x64), t, sc)


# ---------------------------------------------------------------------------------------------- others


def exp10(x):
    x64, t, sc = _in64(x)
    with np.errstate(all="ignore"):
        return _back(np.power(10.0, x64), t, sc)


def rsqrt(x):
    x64, t, sc = _in64(x)
    with np.errstate(all="ignore"):
        return _back(1.0 / np.sqrt(x64), t, sc)


def rcbrt(x):
    x64, t, sc = _in64(x)
    with np.errstate(all="ignore"):
        return _back(1.0 / np.cbrt(x64), t, sc)


def powi(x, n):
    """libdevice's ``__nv_powi``/``__nv_powif``: binary powering in the argument's own precision (``r *= x``
    for each set bit of ``|n|``, ``x *= x`` between), then ``1 / r`` for a negative n: so ``powi(2^64, -16)``
    is 0 (2^1024 overflowed) as on the GPU, not the subnormal 2^-1024."""
    (x, n), sc = lanes(x, n)
    x, n = np.broadcast_arrays(x, n)
    e = np.abs(n.astype(np.int64)).astype(np.uint32)        # |INT_MIN| read unsigned, as libdevice's lshr
    r = np.ones(x.shape, x.dtype)
    base = x.copy()
    with np.errstate(all="ignore"):
        while True:
            r = np.where(e & 1, r * base, r)
            e = e >> np.uint32(1)
            if not e.any():
                break
            base = base * base
        r = np.where(n < 0, x.dtype.type(1) / r, r)
    return done(r.astype(x.dtype), sc)


def fdim(x, y):
    (x, y), sc = lanes(x, y)
    with np.errstate(all="ignore"):
        r = np.where(x > y, x - y, x.dtype.type(0))
        return done(np.where(np.isnan(x) | np.isnan(y), x.dtype.type(np.nan), r).astype(x.dtype), sc)


def logb(x):
    (x,), sc = lanes(x)
    with np.errstate(all="ignore"):
        _, e = np.frexp(x)
        r = (e - 1).astype(x.dtype)
        r = np.where(x == 0, -np.inf, np.where(np.isinf(x), np.inf, np.where(np.isnan(x), np.nan, r)))
    return done(r.astype(x.dtype), sc)


def ilogb(x):
    (x,), sc = lanes(x)
    _, e = np.frexp(x)
    lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    r = np.where((x == 0) | np.isnan(x), lo, np.where(np.isinf(x), hi, e - 1))
    return done(r.astype(np.int32), sc)


def round_half_away(x):
    """C's round(): halves away from zero (exact: x - trunc(x) is computed without error)."""
    (x,), sc = lanes(x)
    with np.errstate(all="ignore"):
        tr = np.trunc(x)
        r = np.where(np.abs(x - tr) >= 0.5, tr + np.sign(x), tr)
        r = np.where(np.isfinite(x), r, x)
    return done(r.astype(x.dtype), sc)


def saturate(x):
    """__saturatef: clamped to [+0, 1]; NaN gives +0."""
    (x,), sc = lanes(x)
    return done(np.where(x > 0, np.minimum(x, x.dtype.type(1)), x.dtype.type(0)).astype(x.dtype), sc)


def signbit(x):
    (x,), sc = lanes(x)
    return done(np.signbit(x).astype(np.int32), sc)


def _remquo(x: float, y: float) -> tuple[float, int]:
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan, 0
    if math.isinf(y):
        return x, 0
    q = Fraction(x) / Fraction(y)
    n = round(q)                                   # Python's round: halves to even, as IEEE's remainder
    r = float(Fraction(x) - n * Fraction(y))
    if r == 0:
        r = math.copysign(0.0, x)
    quo = abs(n) & 7
    return r, -quo if q < 0 else quo


def remquo(x, y):
    """(IEEE remainder, the quotient's sign and its low 3 bits: all C promises, and what libdevice gives)."""
    (x, y), sc = lanes(x, y)
    pairs = [_remquo(float(a), float(b)) for a, b in zip(*(np.broadcast_to(v, np.broadcast(x, y).shape).ravel()
                                                          for v in (x, y)))]
    shape = np.broadcast(x, y).shape
    r = np.array([p[0] for p in pairs], F64).reshape(shape).astype(x.dtype)
    q = np.array([p[1] for p in pairs], np.int32).reshape(shape)
    return done(r, sc), done(q, sc)


def sincos(x):
    (x,), sc = lanes(x)
    with np.errstate(all="ignore"):
        return done(np.sin(x), sc), done(np.cos(x), sc)

