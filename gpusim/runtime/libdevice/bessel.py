"""Bessel functions of the first and second kind of integer order (libdevice's ``j0``, ``j1``, ``jn``, ``y0``,
``y1``, ``yn`` and their float32 forms), element by element.

* ``J0``, ``J1``, ``Y0``, ``Y1`` for ``x <= 25``: their power series (``Y`` with its logarithmic term), summed
  in 40-digit decimal arithmetic, so the series' cancellation (terms up to ~1e9 for a result near 1) costs
  nothing; above 25: Hankel's asymptotic expansion, summed while its terms shrink (to ~e^-2x), with
  ``cos(x - phase)`` expanded so that only ``cos(x)``/``sin(x)`` see the large argument.
* ``Y_n``: the recurrence ``Y_{k+1} = (2k/x) Y_k - Y_{k-1}`` upward from Y0, Y1 (stable for Y).
* ``J_n``: up to x = 25 its power series (any n); above, the same recurrence upward while ``k <= x/2``
  (where it is stable for J), and beyond that the ratio ``J_n / J_k0`` from the recurrence run downward
  from far above ``n`` (Miller's method).
* Symmetries: ``J_{-n} = (-1)^n J_n``, ``J_n(-x) = (-1)^n J_n(x)``; ``Y`` of a negative x is NaN, of 0 -inf.

libdevice documents absolute error bounds for these (about 1e-15 for ``j0`` near the origin, looser for
large ``x`` and ``n``); gpusim's values are within ~1e-16 absolute of the exact ones.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np

from .rounding import F64, done, lanes

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
    s = math.sqrt(2 / (math.pi * x))
    return s * (p * cos_chi - q * sin_chi), s * (p * sin_chi + q * cos_chi)


def _first_two(x: float) -> tuple[float, float, float, float]:
    """J0, J1, Y0, Y1 at x > 0."""
    f = _series if x <= 25 else _hankel
    (j0, y0), (j1, y1) = f(0, x), f(1, x)
    return j0, j1, y0, y1


def jn_scalar(n: int, x: float) -> float:
    if math.isnan(x):
        return math.nan
    sign = 1.0
    if n < 0:
        n, sign = -n, (-1.0) ** n
    if x < 0:
        x, sign = -x, sign * (-1.0) ** n
    if math.isinf(x):
        return 0.0
    if x == 0:
        return sign * (1.0 if n == 0 else 0.0)
    if x <= 25:
        return sign * _series_j(n, x)
    j0, j1, _, _ = _first_two(x)
    if n <= 1:
        return sign * (j0 if n == 0 else j1)
    k0 = max(1, min(n, int(x / 2)))                  # upward to k0 (stable while k <= x/2)
    lo, hi = j0, j1
    for k in range(1, k0):
        lo, hi = hi, (2 * k / x) * hi - lo
    if k0 == n:
        return sign * hi
    start = n + 30 + int(math.sqrt(60 * n))          # downward from far above n: the ratio J_n / J_k0
    f_next, f = 0.0, 1.0
    at_n = 0.0
    for k in range(start, k0 - 1, -1):               # ends with f = f_{k0-1}, f_next = f_{k0}
        f_next, f = f, (2 * k / x) * f - f_next
        if abs(f) > 1e250:                           # rescale (only the ratios matter)
            f_next, f, at_n = f_next * 1e-250, f * 1e-250, at_n * 1e-250
        if k - 1 == n:
            at_n = f
    if abs(hi) >= abs(lo):                           # normalise by the larger of J_k0, J_k0-1
        return sign * at_n / f_next * hi
    return sign * at_n / f * lo


def yn_scalar(n: int, x: float) -> float:
    if math.isnan(x) or x < 0:
        return math.nan
    sign = 1.0
    if n < 0:
        n, sign = -n, (-1.0) ** n
    if x == 0:
        return -math.inf * sign
    if math.isinf(x):
        return 0.0
    _, _, y0, y1 = _first_two(x)
    if n == 0:
        return sign * y0
    lo, hi = y0, y1
    for k in range(1, n):
        lo, hi = hi, (2 * k / x) * hi - lo
        if math.isinf(hi):
            break
    return sign * hi


def _each(f, n, x):
    (n, x), sc = lanes(n, x)
    shape = np.broadcast(n, x).shape
    flat = zip(np.broadcast_to(n, shape).ravel(), np.broadcast_to(x, shape).ravel())
    with np.errstate(all="ignore"):
        r = np.array([f(int(a), float(b)) for a, b in flat], F64).reshape(shape).astype(x.dtype)
    return done(r, sc)


def jn(n, x):
    return _each(jn_scalar, n, x)


def yn(n, x):
    return _each(yn_scalar, n, x)


def j0(x):
    return jn(np.int32(0), x)


def j1(x):
    return jn(np.int32(1), x)


def y0(x):
    return yn(np.int32(0), x)


def y1(x):
    return yn(np.int32(1), x)
