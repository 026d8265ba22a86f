"""Arithmetic rounded in a chosen direction, bit for bit as IEEE 754 (and the GPU's ``add.rd``, ``div.rz``, ...)
defines it, on lane vectors or NumPy scalars.

The method is the same everywhere. NumPy computes ``r``, the result rounded to nearest, which is always one of
the two representable neighbours of the exact value ``v`` (or ``v`` itself). An error-free transformation
then gives a float ``d`` whose sign is the sign of ``v - r`` (zero where ``r`` is exact), and ``r`` steps to
its neighbour (``np.nextafter``) where that sign says the direction rounded the other way:

* float32 operands are exact in float64, so ``v - r`` is one float64 subtraction away (a float64 product of
  two float32 values is exact; a float32 sum needs the float64 TwoSum error);
* float64 sums use TwoSum (``s + e == a + b`` exactly); products, quotients and square roots use Dekker's
  TwoProduct on the operands' mantissas (``np.frexp``: no overflow, no underflow), with the residual of
  ``q*b`` for a quotient and of ``s*s`` for a square root;
* a round-to-nearest float32 result from a float64 pair ``s + e`` is found by rounding ``s`` to odd first
  (then one rounding to float32 is exact: 53 bits are more than 24 + 1).

Signed zeros follow IEEE: an exact zero sum of operands of opposite signs is -0 rounding down, +0 otherwise.
Overflow rounds to the largest finite value where the direction is toward zero, and NaN stays NaN.
The float64 fused multiply-add in a directed mode is vectorised on moderate operands (TwoProduct, TwoSum and
distillation decide the sign of ``a*b + c - y`` exactly) and exact rational arithmetic element by element
(``fractions.Fraction``) elsewhere.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

F32, F64 = np.float32, np.float64
_SPLIT = F64(134217729.0)  # 2**27 + 1
MODES = ("rn", "rz", "rd", "ru")


def lanes(*xs):
    """The arguments as arrays, and whether they were all scalars (the result is then a scalar too)."""
    return [np.asarray(x) for x in xs], all(np.ndim(x) == 0 for x in xs)


def done(r, scalar: bool):
    return r[()] if scalar else r


def two_sum(a, b):
    """``(s, e)``: ``s = fl(a + b)`` and ``s + e == a + b`` exactly (no overflow)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _split(a):
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a, b):
    """``(p, e)``: ``p = fl(a * b)`` and ``p + e == a * b`` exactly, for operands near 1 (mantissas)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def step(r, d, mode: str):
    """``r`` (rounded to nearest, a neighbour of the exact value) rounded by ``mode`` instead, where ``d`` has
    the sign of exact - r (NaN: leave ``r``)."""
    if mode == "rn":
        return r
    t = r.dtype.type
    if mode == "rd":
        return np.where(d < 0, np.nextafter(r, t(-np.inf)), r)
    if mode == "ru":
        return np.where(d > 0, np.nextafter(r, t(np.inf)), r)
    toward_zero = ((r > 0) & (d < 0)) | ((r < 0) & (d > 0))
    return np.where(toward_zero, np.nextafter(r, t(0)), r)


def to_odd(s, e):
    """``s`` rounded to odd by the sign of ``e``: the neighbour with an odd last bit where ``s`` is inexact."""
    even = (s.view(np.int64) & 1) == 0
    away = np.where(e > 0, np.inf, -np.inf)
    return np.where((e != 0) & even & np.isfinite(s), np.nextafter(s, away), s)


def _zero_sign(r, a, b, exact_zero, mode: str):
    """IEEE's sign of an exact zero sum ``a + b``: -0 rounding down unless both are +0; +0 otherwise unless
    both are -0 (which ``r``, rounded to nearest, has already)."""
    if mode != "rd":
        return r
    both_plus = ~np.signbit(a) & ~np.signbit(b)
    return np.where(exact_zero & ~both_plus, -np.abs(r), r)


# ---------------------------------------------------------------------------------------------- float32


def fadd(a, b, mode: str):
    (a, b), sc = lanes(a, b)
    with np.errstate(all="ignore"):
        r = np.add(a, b, dtype=F32)
        s, e = two_sum(a.astype(F64), b.astype(F64))
        d = (s - r.astype(F64)) + e
        out = _zero_sign(step(r, d, mode), a, b, (r == 0) & (d == 0), mode)
    return done(out, sc)


def fsub(a, b, mode: str):
    return fadd(a, np.negative(b), mode)


def fmul(a, b, mode: str):
    (a, b), sc = lanes(a, b)
    with np.errstate(all="ignore"):
        r = np.multiply(a, b, dtype=F32)
        d = a.astype(F64) * b.astype(F64) - r.astype(F64)   # the float64 product is exact
        out = step(r, d, mode)
    return done(out, sc)


def fdiv(a, b, mode: str):
    (a, b), sc = lanes(a, b)
    with np.errstate(all="ignore"):
        r = np.divide(a, b, dtype=F32)
        b64 = b.astype(F64)
        d = (a.astype(F64) - r.astype(F64) * b64) * np.sign(b64)   # r*b is exact: sign of a/b - r
        out = step(r, d, mode)
    return done(out, sc)


def frcp(x, mode: str):
    return fdiv(F32(1), x, mode)


def fsqrt(x, mode: str):
    (x,), sc = lanes(x)
    with np.errstate(all="ignore"):
        r = np.sqrt(x, dtype=F32)
        r64 = r.astype(F64)
        d = x.astype(F64) - r64 * r64
        out = step(r, d, mode)
    return done(out, sc)


def round_pair_to_f32(s, e, mode: str):
    """The float64 pair ``s + e`` (exact sum, ``s`` its float64 rounding) rounded to float32 by ``mode``."""
    r = to_odd(s, e).astype(F32)
    d = (s - r.astype(F64)) + e
    return step(r, d, mode), d


def fmaf(a, b, c, mode: str):
    (a, b, c), sc = lanes(a, b, c)
    with np.errstate(all="ignore"):
        p = a.astype(F64) * b.astype(F64)
        c64 = c.astype(F64)
        s, e = two_sum(p, c64)
        e = np.where(np.isfinite(s), e, 0.0)
        out, d = round_pair_to_f32(s, e, mode)
        out = _zero_sign(out, p, c64, (out == 0) & (d == 0), mode)
    return done(out, sc)


def frsqrt_rn(x):
    """1/sqrt(x) rounded to nearest float32: the float64 estimate rounded, then corrected where the exact
    value lies past the midpoint to a neighbour (``m*m*x`` against 1, exactly: ``m*m`` has 50 bits)."""
    (x,), sc = lanes(x)
    with np.errstate(all="ignore"):
        x64 = x.astype(F64)
        r = (1.0 / np.sqrt(x64)).astype(F32)
        ok = np.isfinite(r) & (r > 0)
        for toward in (np.inf, 0.0):
            n = np.nextafter(r, F32(toward))
            m = (r.astype(F64) + n.astype(F64)) / 2
            p, e = two_prod(m * m, x64)
            past = (p - 1.0) + e                       # sign of m*m*x - 1
            beyond = past < 0 if toward == np.inf else past > 0   # 1/sqrt(x) beyond the midpoint m
            r = np.where(ok & beyond & np.isfinite(n) & (n > 0), n, r)
    return done(r, sc)


# ---------------------------------------------------------------------------------------------- float64


def _scaled(x):
    m, e = np.frexp(x)
    return m, e.astype(np.int64)


def dadd(a, b, mode: str):
    (a, b), sc = lanes(a, b)
    with np.errstate(all="ignore"):
        r, e = two_sum(a, b)
        overflow = np.isinf(r) & np.isfinite(a) & np.isfinite(b)
        d = np.where(overflow, -r, np.where(np.isfinite(r), e, 0.0))
        out = _zero_sign(step(r, d, mode), a, b, (r == 0) & (d == 0), mode)
    return done(out, sc)


def dmul(a, b, mode: str):
    (a, b), sc = lanes(a, b)
    with np.errstate(all="ignore"):
        r = a * b
        ma, ea = _scaled(a)
        mb, eb = _scaled(b)
        rs = np.ldexp(r, -(ea + eb))                  # r on the mantissas' scale: exact
        p, e = two_prod(ma, mb)
        d = np.where(np.isfinite(a) & np.isfinite(b), (p - rs) + e, 0.0)
        out = step(r, d, mode)
    return done(out, sc)


def ddiv(a, b, mode: str):
    (a, b), sc = lanes(a, b)
    with np.errstate(all="ignore"):
        r = a / b
        ma, ea = _scaled(a)
        mb, eb = _scaled(b)
        q = np.ldexp(r, -(ea - eb))
        p, e = two_prod(q, mb)
        d = ((ma - p) - e) * np.sign(mb)              # sign of a/b - r
        finite = np.isfinite(a) & np.isfinite(b) & (b != 0)
        d = np.where(finite, np.where(np.isinf(r), -r, d), 0.0)
        out = step(r, d, mode)
    return done(out, sc)


def drcp(x, mode: str):
    return ddiv(F64(1), x, mode)


def dsqrt(x, mode: str):
    (x,), sc = lanes(x)
    with np.errstate(all="ignore"):
        r = np.sqrt(x)
        m, e = _scaled(x)
        odd = e & 1
        m = np.where(odd == 1, m * 2, m)
        e = e - odd
        s = np.ldexp(r, -(e // 2))
        p, pe = two_prod(s, s)
        d = np.where(np.isfinite(x) & (x > 0), (m - p) - pe, 0.0)
        out = step(r, d, mode)
    return done(out, sc)


def _fma_exact(a: float, b: float, c: float, mode: str) -> float:
    if not (math.isfinite(a) and math.isfinite(b)):
        return a * b + c
    if not math.isfinite(c):
        return c
    v = Fraction(a) * Fraction(b) + Fraction(c)
    if v == 0:
        p_neg = (math.copysign(1, a) * math.copysign(1, b)) < 0
        both_neg = p_neg and math.copysign(1, c) < 0
        both_pos = not p_neg and math.copysign(1, c) > 0
        return -0.0 if both_neg or (mode == "rd" and not both_pos) else 0.0
    try:
        r = float(v)
    except OverflowError:
        r = math.inf if v > 0 else -math.inf
    d = v - Fraction(r) if math.isfinite(r) else (-1 if r > 0 else 1)
    if mode == "rd" and d < 0:
        return math.nextafter(r, -math.inf)
    if mode == "ru" and d > 0:
        return math.nextafter(r, math.inf)
    if mode == "rz" and ((r > 0 and d < 0) or (r < 0 and d > 0)):
        return math.nextafter(r, 0.0)
    return r


def _sign_of_sum(terms: list) -> tuple[np.ndarray, np.ndarray]:
    """(sign of the exact sum of the float64 arrays ``terms``, where that sign is certain): three passes of
    TwoSum distillation, then the sign of the leading term where it outweighs the rest four times over."""
    p = list(terms)
    for _ in range(3):
        for i in range(1, len(p)):
            p[i], p[i - 1] = two_sum(p[i], p[i - 1])
    rest = sum(np.abs(x) for x in p[:-1])
    certain = (rest == 0) | (np.abs(p[-1]) > 4 * rest)
    return np.sign(p[-1]), certain


def _directed(cands, signs, mode, r0, out, sure):
    """The candidate each direction picks, where the exact value lies inside the candidates' window."""
    down = r0 > 0 if mode == "rz" else np.full(r0.shape, mode == "rd")
    found = np.zeros(r0.shape, bool)
    for j in range(len(cands) - 1, -1, -1):              # rounding down: the largest candidate <= v
        hit = down & ~found & (signs[j] >= 0)
        out = np.where(hit, cands[j], out)
        found |= hit
    for j in range(len(cands)):                          # rounding up: the smallest candidate >= v
        hit = ~down & ~found & (signs[j] <= 0)
        out = np.where(hit, cands[j], out)
        found |= hit
    bracketed = (down & (signs[-1] < 0)) | (~down & (signs[0] > 0))
    return out, sure & found & bracketed


def _nearest(cands, s, e1, e, sure):
    """The candidate nearest the exact value (ties to even), by its sign against each midpoint."""
    mids = []
    for lo, hi in zip(cands, cands[1:]):
        half = (hi - lo) / 2                             # exact: neighbours' spacing halved
        sg, ok = _sign_of_sum([s, -lo, -half, e1, e])
        mids.append(sg)
        sure = sure & ok
    out = cands[0].copy()
    for j, sg in enumerate(mids):                        # above midpoint j: candidate j + 1 or later
        even_hi = (cands[j + 1].view(np.int64) & 1) == 0
        out = np.where((sg > 0) | ((sg == 0) & even_hi), cands[j + 1], out)
    inside = (mids[0] >= 0) & (mids[-1] <= 0)
    return out, sure & inside


def fma(a, b, c, mode: str):
    """float64 ``a*b + c`` rounded once by ``mode``. Vectorised where the operands are moderate: ``a*b`` is
    ``P + E`` exactly (TwoProduct), and the sign of ``P + E + c - y`` for the candidates ``y`` around the
    float64 estimate is certain by distillation; the rest (huge, tiny or special operands, results near
    zero or overflow, uncertain signs) element by element in exact rational arithmetic."""
    (a, b, c), sc = lanes(a, b, c)
    shape = np.broadcast(a, b, c).shape
    a, b, c = (np.broadcast_to(v, shape).astype(F64).ravel() for v in (a, b, c))
    with np.errstate(all="ignore"):
        _, ea = np.frexp(a)
        _, eb = np.frexp(b)
        _, ec = np.frexp(c)
        moderate = (np.abs(ea) <= 450) & (np.abs(eb) <= 450) & ((c == 0) | (np.abs(ec) <= 900))
        moderate &= np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & (a != 0) & (b != 0)
        p, e = two_prod(a, b)
        s, e1 = two_sum(p, c)
        r0 = s + (e1 + e)
        moderate &= (np.abs(r0) > 2.0 ** -900) & (np.abs(r0) < 2.0 ** 1000)
        cands = [r0]
        for _ in range(2):
            cands = [np.nextafter(cands[0], -np.inf)] + cands + [np.nextafter(cands[-1], np.inf)]
        signs, sure = [], moderate.copy()
        for y in cands:
            sg, ok = _sign_of_sum([s, -y, e1, e])
            signs.append(sg)
            sure &= ok
        out = np.full(shape, np.nan).ravel()
        if mode == "rn":
            out, fast = _nearest(cands, s, e1, e, sure)
        else:
            out, fast = _directed(cands, signs, mode, r0, out, sure)
    for k in np.flatnonzero(~fast):
        out[k] = _fma_exact(float(a[k]), float(b[k]), float(c[k]), mode)
    return done(out.reshape(shape), sc)
