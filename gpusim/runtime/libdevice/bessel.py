"""Bessel functions of the first and second kind of integer order (libdevice's ``j0``, ``j1``, ``jn``, ``y0``,
``y1``, ``yn`` and their float32 forms).

Orders 0 and 1, element by element, as accurately as float64 holds them:

* ``J0``, ``J1``, ``Y0``, ``Y1`` for ``x <= 25``: their power series (``Y`` with its logarithmic term), summed
  in 40-digit decimal arithmetic, so the series' cancellation (terms up to ~1e9 for a result near 1) costs
  nothing; above 25: Hankel's asymptotic expansion, summed while its terms shrink (to ~e^-2x), with
  ``cos(x - phase)`` expanded so that only ``cos(x)``/``sin(x)`` see the large argument.
* ``J_n(-x) = (-1)^n J_n(x)``; ``Y`` of a negative x is NaN, of 0 -inf.

Orders n >= 2 the way libdevice computes them (its ``__nv_jn``/``__nv_yn``/``__nv_jnf``/``__nv_ynf``), in
the argument's precision, each step one fused multiply-add, so that results, NaN and infinities included,
are the H200's (tests/gpusim/data/libdevice_h200.npz):

* a negative order gives NaN, for ``jn`` and ``yn`` alike (libdevice documents it; no ``(-1)^n`` symmetry).
* ``jn`` where ``|x| > n - 1`` (float32: ``|x| > n``, and ``> n + 1`` for n > 4): the recurrence
  ``J_{k+1} = k (2/x) J_k - J_{k-1}`` upward from J0, J1. Elsewhere Miller's method: the same recurrence
  downward from the even order ``m = n + floor(sqrt(60 n))`` (float32: ``40 n``), rounded down to even,
  starting at 1 and 0; where a value passes 1e15 every running quantity is scaled by 1e-15; J_n's value is
  kept, and the result is it over the normalising sum ``J_0 + 2 J_2 + 2 J_4 + ...``. Where one step grows by
  more than 1e15 times the scaling cannot keep up: the values overflow and the result is NaN. That is the
  GPU's answer for every x of 0 and for tiny ones (``jn(68, 1e-29)``), though the true value is ~0.
* ``yn``: NaN for x < 0 or NaN; for |x| below ~1e-308 (float32: 2^-126) ``-(2/pi) / x`` (float32:
  ``-1e9 / |x|``); else the recurrence upward from Y0, Y1; a NaN it ends in becomes -inf.

libdevice documents absolute error bounds for these (about 1e-15 for ``j0`` near the origin, looser for
large ``x`` and ``n``); gpusim's J0, J1, Y0, Y1 are within ~1e-16 absolute of the exact ones.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np

from .rounding import F32, F64, done, fma, fmaf, lanes

_PI = Decimal("3.14159265358979323846264338327950288419716939937510")
_GAMMA = Decimal("0.57721566490153286060651209008240243104215933593992")   # Euler-Mascheroni


def _series(order: int, x: float) -> tuple[float, float]:
    """(J_order(x), Y_order(x)) for order 0 or 1, 0 < x <= 25, from the power series in 40 digits."""
    with localcontext() as ctx:
        ctx.prec = 40
        h = Decimal(x) / 2
        q = -h * h
        term = Decimal(1) if order == 0 else h          # (x/2)^order (-x^2/4)^k / (k! (k+order)!)
        j = Decimal(0)
        harm = Decimal(0)                              # H_k
        tail = Decimal(0)                              # the sum with harmonic weights
        for k in range(200):
            if k:
                harm += Decimal(1) / k
                term = term * q / (k * (k + order))
            j += term
            weight = 2 * harm if order == 0 else harm + (harm + Decimal(1) / (k + 1))
            tail += weight * term
            if k > 10 and abs(term) < Decimal("1e-38") * (abs(j) + 1):
                break
        log = (h.ln() + _GAMMA) * 2 / _PI
        if order == 0:
            y = log * j - tail / _PI
        else:
            y = -1 / (_PI * h) + log * j - tail / _PI
        return float(j), float(y)


def _series_j(n: int, x: float) -> float:
    """J_n(x) for 0 < x <= 25 and any n >= 0: the power series in 40 digits (decimal exponents do not
    underflow, so a tiny result rounds to float64 only at the end)."""
    with localcontext() as ctx:
        ctx.prec = 40
        h = Decimal(x) / 2
        q = -h * h
        term = h ** n / math.factorial(n)
        total = Decimal(0)
        for k in range(400):
            if k:
                term = term * q / (k * (k + n))
            total += term
            if k > 10 and abs(term) < Decimal("1e-38") * abs(total):
                break
        return float(total)


def _hankel(order: int, x: float) -> tuple[float, float]:
    """(J_order(x), Y_order(x)) for order 0 or 1 and x > 25: Hankel's expansion."""
    mu = 4.0 * order * order
    p, q = 0.0, 0.0
    term = 1.0
    k = 0
    prev = math.inf
    while abs(term) < prev and k < 200:
        prev = abs(term)
        if k % 2 == 0:
            p += term if k % 4 == 0 else -term
        else:
            q += term if k % 4 == 1 else -term
        k += 1
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8 * x)
    # chi = x - (order/2 + 1/4) pi: cos/sin(x - a) from cos/sin of x and the phase a
    a = (2 * order + 1) * math.pi / 4
    cx, sx = math.cos(x), math.sin(x)
    ca, sa = math.cos(a), math.sin(a)
    cos_chi, sin_chi = cx * ca + sx * sa, sx * ca - cx * sa
    s = math.sqrt(2 / math.pi) / math.sqrt(x)              # pi * x would overflow past 5e307
    return s * (p * cos_chi - q * sin_chi), s * (p * sin_chi + q * cos_chi)


def _first_two(x: float) -> tuple[float, float, float, float]:
    """J0, J1, Y0, Y1 at x > 0."""
    f = _series if x <= 25 else _hankel
    (j0, y0), (j1, y1) = f(0, x), f(1, x)
    return j0, j1, y0, y1


def jn_scalar(n: int, x: float) -> float:
    """J_n(x) for n = 0 or 1 (any sign of x)."""
    if math.isnan(x):
        return math.nan
    sign = math.copysign(1.0, x) if n == 1 else 1.0       # J1 is odd: J1(-0) = -0, J1(-inf) = -0
    x = abs(x)
    if math.isinf(x):
        return sign * 0.0
    if x == 0:
        return sign * (1.0 if n == 0 else 0.0)
    if x <= 25:
        return sign * _series_j(n, x)
    j0, j1, _, _ = _first_two(x)
    return sign * (j0 if n == 0 else j1)


def yn_scalar(n: int, x: float) -> float:
    """Y_n(x) for n = 0 or 1."""
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    if math.isinf(x):
        return 0.0
    _, _, y0, y1 = _first_two(x)
    return y0 if n == 0 else y1


def _each(f, n, x):
    (n, x), sc = lanes(n, x)
    shape = np.broadcast(n, x).shape
    flat = zip(np.broadcast_to(n, shape).ravel(), np.broadcast_to(x, shape).ravel())
    with np.errstate(all="ignore"):
        r = np.array([f(int(a), float(b)) for a, b in flat], F64).reshape(shape).astype(x.dtype)
    return done(r, sc)


def _fma(a, b, c):
    """``a*b + c`` rounded once, in the operands' precision."""
    return fmaf(a, b, c, mode="rn") if a.dtype == F32 else fma(a, b, c, mode="rn")


def _upward(n, x, lo, hi, *, scale_value: bool = False):
    """The recurrence ``v_{k+1} = k (2/x) v_k - v_{k-1}`` from ``v_0 = lo``, ``v_1 = hi`` up to ``v_n`` (each
    lane its own n >= 2): one fused multiply-add a step, ``fma(k * (2/x), v_k, -v_{k-1})``, or with
    ``scale_value`` (``jnf``) ``fma(k * v_k, 2/x, -v_{k-1})``."""
    t = x.dtype.type
    two_over_x = t(2) / x
    for k in range(1, int(n.max(initial=0))):
        step = k < n
        if scale_value:
            v = _fma(t(k) * hi, two_over_x, -lo)
        else:
            v = _fma(t(k) * two_over_x, hi, -lo)
        lo, hi = np.where(step, hi, lo), np.where(step, v, hi)
    return hi


def _miller(n, x):
    """J_n(x) by libdevice's downward recurrence (the module's docstring), every lane at once."""
    t = x.dtype.type
    big, small = t(1e15), t(1e-15)
    per = 60 if t is F64 else 40
    m = 2 * ((n + np.floor(np.sqrt((per * n).astype(t))).astype(np.int64)) >> 1)
    nxt = np.zeros(x.shape, x.dtype)          # J_{k+1}
    cur = np.ones(x.shape, x.dtype)           # J_k
    at_n = np.zeros(x.shape, x.dtype)
    total = np.zeros(x.shape, x.dtype)
    two_over_x = t(2) / x
    for k in range(int(m.max(initial=0)), 0, -1):
        live = k <= m
        if t is F64:
            v = _fma(t(k) * two_over_x, cur, -nxt)
            grown = np.abs(v.astype(F32)).astype(F64) > big        # libdevice tests |(float) v| > 1e15
        else:
            v = _fma((t(k) * t(2)) / x, cur, -nxt)
            grown = np.abs(v) > big
        grown &= live
        v = np.where(grown, v * small, v)
        cur_scaled = np.where(grown, cur * small, cur)
        at_n = np.where(grown, at_n * small, at_n)
        total = np.where(grown, total * small, total)
        at_n = np.where(live & (k - 1 == n), v, at_n)
        if k % 2:
            total = np.where(live, total + t(2) * v, total)
        nxt, cur = np.where(live, cur_scaled, nxt), np.where(live, v, cur)
    return at_n / (total - cur)


def _orders_0_and_1(scalar, n, x):
    """``(n, x, out)``: the arguments as equal-shaped lanes, and the result with the lanes of order 0 and 1
    computed by ``scalar`` (NaN elsewhere, the value of a negative order)."""
    n, x = np.broadcast_arrays(np.asarray(n).astype(np.int64), x)
    out = np.full(x.shape, np.nan, x.dtype)
    low = (n == 0) | (n == 1)
    if low.any():
        out[low] = _each(scalar, n[low], x[low])
    return n, x, out


def _upward_from(scalar, n, x, **kw):
    zeros = np.zeros(x.shape, np.int64)
    return _upward(n, x, _each(scalar, zeros, x), _each(scalar, zeros + 1, x), **kw)


def jn(n, x):
    (n, x), sc = lanes(n, x)
    with np.errstate(all="ignore"):
        n, x, out = _orders_0_and_1(jn_scalar, n, x)
        if x.dtype == F64:
            up = (n >= 2) & (np.abs(x) > (n - 1).astype(F64))
        else:
            up = (n >= 2) & (np.abs(x) > (n + (n > 4)).astype(F32))
        if up.any():
            out[up] = _upward_from(jn_scalar, n[up], x[up], scale_value=x.dtype == F32)
        down = (n >= 2) & ~up
        if down.any():
            out[down] = _miller(n[down], x[down])
    return done(out, sc)


def yn(n, x):
    (n, x), sc = lanes(n, x)
    with np.errstate(all="ignore"):
        n, x, out = _orders_0_and_1(yn_scalar, n, x)
        high = (n >= 2) & (x >= 0)
        if x.dtype == F64:
            tiny = high & (np.abs(x) < F64(np.uint64(0x000730D67819E8D2).view(F64)))
            out[tiny] = F64(-2 / math.pi) / x[tiny]
        else:
            tiny = high & (np.abs(x) < F32(2.0 ** -126))
            out[tiny] = F32(-1e9) / np.abs(x[tiny])
        up = high & ~tiny
        if up.any():
            r = _upward_from(yn_scalar, n[up], x[up])
            out[up] = np.where(np.isnan(r), x.dtype.type(-np.inf), r)
    return done(out, sc)


def j0(x):
    return jn(np.int32(0), x)


def j1(x):
    return jn(np.int32(1), x)


def y0(x):
    return yn(np.int32(0), x)


def y1(x):
    return yn(np.int32(1), x)
