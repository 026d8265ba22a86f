"""Directed rounding and conversions, run in kernels on gpusim, against exact rational arithmetic.

The oracle is ``fractions.Fraction``: the exact value ``v`` of each operation, and IEEE 754's definition of
each rounding direction as a property of the result ``r``: rounding down, ``r <= v < next_up(r)``; up,
``next_down(r) < v <= r``; toward zero, whichever of those has ``|r| <= |v|``; to nearest, no
representable value is nearer, ties to the even one. Square roots are compared by squares (``r*r`` against
``x``), exactly too. Signed zeros: an exact zero sum is -0 rounding down unless both operands are +0, and +0
otherwise unless both are -0 (IEEE 754 section 6.3); a non-zero value rounded to zero keeps its sign.
Non-finite cases (an infinite or NaN operand, division by zero, the square root of a negative) do not depend
on the rounding direction: they must equal NumPy's round-to-nearest result. Conversions to integers follow
PTX's ``cvt``: the integer by the mode, saturated to the range; NaN gives 0 from float32 to a 32-bit
integer, and the destination's top bit alone (0x80000000 / 0x8000000000000000, signed or not) from float64
or to 64 bits: the H200's results (tests/gpusim/data/libdevice_h200.npz; PTX leaves NaN unspecified).

Inputs: tests/gpusim/libdevice_cases.py's (specials, every pair of specials, random bit patterns, near
cancellations) and, here, ties: sums and quotients exactly half-way between two floats.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from libdevice_cases import SIGNATURES, inputs, kernels, outputs

import gpusim

MODES = ("rn", "rz", "rd", "ru")
F32_OPS = [f"f{op}_{m}" for op in ("add", "sub", "mul", "div", "rcp", "sqrt") for m in MODES] + \
    [f"fmaf_{m}" for m in MODES] + ["frsqrt_rn"]
F64_OPS = [f"d{op}_{m}" for op in ("add", "mul", "div", "rcp", "sqrt") for m in MODES] + [f"fma_{m}" for m in MODES]
N = 1024


@pytest.fixture(scope="module")
def ks(tmp_path_factory):
    names = [n for n in SIGNATURES if n in F32_OPS + F64_OPS or n in CONVERSIONS]
    return kernels(names, tmp_path_factory.mktemp("rounding"))


def _ties(t) -> tuple[np.ndarray, np.ndarray]:
    """Pairs whose sum lies exactly half-way between two floats of ``t`` (and some whose quotient is exact)."""
    eps = np.finfo(t).eps
    one = t(1)
    a = np.array([1, 1, -1, 3, 2 ** 10, 1, 1.5, -1.5, 1, 6, -6], t)
    b = np.array([eps / 2, 3 * eps / 2, -eps / 2, 3 * eps, 2 ** 10 * eps / 2, -eps / 4, eps * 0.75, -eps * 0.75,
                  one, 3, -4], t)
    return a, b


def run(ks, name, args):
    outs = outputs(name, args[0].size)
    assert gpusim.launch(ks[name], (args[0].size + 127) // 128, 128, outs + list(args)).faults == []
    return outs[0]


def sign(q) -> int:
    return (q > 0) - (q < 0)


class Exact:
    """An exact result, known by ``cmp(y) = sign(v - y)`` for a Fraction or float ``y`` (floats may be
    infinite): a rational value, or the square root or reciprocal square root of one."""

    def __init__(self, value: Fraction | None = None, sqrt_of: Fraction | None = None,
                 rsqrt_of: Fraction | None = None):
        self.value, self.sqrt_of, self.rsqrt_of = value, sqrt_of, rsqrt_of

    def cmp(self, y) -> int:
        if isinstance(y, float):
            if math.isinf(y):
                return -1 if y > 0 else 1
            y = Fraction(y)
        if self.value is not None:
            return sign(self.value - y)
        if self.sqrt_of is not None:                      # sqrt(x) >= 0; sqrt(x) > y <=> x > y*y
            return 1 if y < 0 else sign(self.sqrt_of - y * y)
        return 1 if y <= 0 else sign(1 - y * y * self.rsqrt_of)   # 1/sqrt(x) > y <=> y*y*x < 1


def _overflow_point(t) -> Fraction:
    """Where rounding to nearest goes to infinity: half-way from the largest float to 2**maxexp."""
    fi = np.finfo(t)
    return (Fraction(float(fi.max)) + Fraction(2) ** fi.maxexp) / 2


def rounded_right(r, ex: Exact, mode: str, t) -> bool:
    """Is ``r`` the float of type ``t`` that rounding ``ex`` by ``mode`` gives (IEEE 754's definitions)?"""
    r = t(r)
    with np.errstate(over="ignore"):
        up = float(np.nextafter(r, t(np.inf)))
        down = float(np.nextafter(r, t(-np.inf)))
    rf = float(r)
    if mode == "rz":
        mode = "rd" if ex.cmp(0.0) >= 0 else "ru"
    if mode == "rd":
        return ex.cmp(rf) >= 0 and ex.cmp(up) < 0
    if mode == "ru":
        return ex.cmp(rf) <= 0 and ex.cmp(down) > 0
    edge = _overflow_point(t)
    if math.isinf(rf):
        return ex.cmp(edge) >= 0 if rf > 0 else ex.cmp(-edge) <= 0

    def mid(n: float) -> Fraction:
        return (edge if n > 0 else -edge) if math.isinf(n) else (Fraction(rf) + Fraction(n)) / 2

    even = int(np.asarray(r).view(f"u{np.dtype(t).itemsize}")) % 2 == 0
    hi, lo = ex.cmp(mid(up)), ex.cmp(mid(down))
    return (hi < 0 or (hi == 0 and even)) and (lo > 0 or (lo == 0 and even))


def _zero_sum_negative(a: float, b: float, mode: str) -> bool:
    """IEEE's sign of an exact zero ``a + b``."""
    na, nb = math.copysign(1, a) < 0, math.copysign(1, b) < 0
    if na and nb:
        return True
    if not na and not nb:
        return False
    return mode == "rd"


def expected(op: str, mode: str, xs: list[float], t):
    """("special", value) where the result does not depend on rounding, else ("exact", Exact, zero_negative)."""
    with np.errstate(all="ignore"):
        if op in ("add", "sub"):
            a, b = xs[0], xs[1] if op == "add" else -xs[1]
            if not (math.isfinite(a) and math.isfinite(b)):
                return "special", t(a) + t(b)
            return "exact", Exact(Fraction(a) + Fraction(b)), _zero_sum_negative(a, b, mode)
        if op in ("mul", "div", "rcp"):
            a, b = (xs[0], xs[1]) if op != "rcp" else (1.0, xs[0])
            neg = (math.copysign(1, a) < 0) != (math.copysign(1, b) < 0)
            if op == "mul":
                if not (math.isfinite(a) and math.isfinite(b)):
                    return "special", t(a) * t(b)
                return "exact", Exact(Fraction(a) * Fraction(b)), neg
            if not (math.isfinite(a) and math.isfinite(b)) or b == 0:
                return "special", t(a) / t(b)
            return "exact", Exact(Fraction(a) / Fraction(b)), neg
        if op == "sqrt":
            x = xs[0]
            if not math.isfinite(x) or x <= 0:
                return "special", np.sqrt(t(x))
            return "exact", Exact(sqrt_of=Fraction(x)), False
        if op == "rsqrt":
            x = xs[0]
            if not math.isfinite(x) or x <= 0:
                return "special", t(1) / np.sqrt(t(x))
            return "exact", Exact(rsqrt_of=Fraction(x)), False
        if op == "fma":
            a, b, c = xs
            if not (math.isfinite(a) and math.isfinite(b)):
                return "special", t(a) * t(b) + t(c)
            if not math.isfinite(c):
                return "special", t(c)
            p_neg = (math.copysign(1, a) < 0) != (math.copysign(1, b) < 0)
            zero_neg = _zero_sum_negative(-0.0 if p_neg else 0.0, c, mode)
            return "exact", Exact(Fraction(a) * Fraction(b) + Fraction(c)), zero_neg
        if op == "double2float":
            x = xs[0]
            if not math.isfinite(x):
                return "special", np.float32(x)
            return "exact", Exact(Fraction(x)), math.copysign(1, x) < 0
    raise AssertionError(op)


def check(op: str, mode: str, t, args, r) -> list[str]:
    """The inputs where ``r`` is not the correctly rounded result (as readable strings)."""
    bad = []
    for k in range(r.size):
        xs = [float(a[k]) for a in args]
        kind, *rest = expected(op, mode, xs, t)
        got = r[k]
        if kind == "special":
            want = rest[0]
            ok = (np.isnan(want) and np.isnan(got)) or (want == got and np.signbit(want) == np.signbit(got))
        else:
            ex, zero_negative = rest
            ok = rounded_right(got, ex, mode, t)
            if ok and got == 0:
                v_sign = ex.cmp(0.0)
                ok = bool(np.signbit(got)) == (zero_negative if v_sign == 0 else v_sign < 0)
        if not ok:
            bad.append(f"{op}_{mode}{tuple(xs)} gave {got!r}")
    return bad


def _args(name: str, t):
    args = inputs(name)
    if len(args) >= 2:
        a, b = _ties(t)
        args[0][-a.size:], args[1][-b.size:] = a, b
    return args


@pytest.mark.parametrize("name", F32_OPS + F64_OPS)
def test_arithmetic_is_rounded_exactly_as_ieee_defines_each_direction(ks, name):
    t = np.float32 if name.startswith("f") and not name.startswith("fma_") else np.float64
    base, mode = name.rsplit("_", 1)
    op = "rsqrt" if base == "frsqrt" else base[1:] if base not in ("fmaf", "fma") else "fma"
    args = _args(name, t)
    if op == "fma" and t == np.float32:        # the float64 sum rounds to a float32 midpoint: one rounding
        one, e23, e24 = t(1), t(2.0 ** -23), t(2.0 ** -24)            # must still go up
        args[0][-1], args[1][-1], args[2][-1] = one + e23, one - e24, t(2.0 ** -47) * (one + e23)
    if op == "fma" and t == np.float64:        # a*b cancelled by c: what is left is the product's low bits
        rng = np.random.default_rng(7)
        x, y = rng.standard_normal(64), rng.standard_normal(64)
        with np.errstate(all="ignore"):
            z = -(x * y) * (1 + np.finfo(t).eps * rng.integers(-2, 3, 64))
        for arg, v in zip(args, (x, y, z)):
            arg[-128:-64] = v
        tie = (1 + 2.0 ** -26, 1 + 2.0 ** -27)          # a*b is 1 + 3 * 2**-27 + 2**-53: half-way (+ a nudge)
        for k, nudge in enumerate((0.0, 2.0 ** -300, -(2.0 ** -300))):
            args[0][-140 + k], args[1][-140 + k], args[2][-140 + k] = tie[0], tie[1], nudge
    r = run(ks, name, args)
    assert r.dtype == t
    assert check(op, mode, t, args, r)[:5] == []


def test_the_oracle_tells_the_directions_apart():
    """The oracle must be able to fail: each direction's result is wrong for the others on inexact values."""
    t = np.float32
    ex = Exact(Fraction(1) + Fraction(1, 10 ** 9))        # just above 1: down is 1, up is next float
    up = float(np.nextafter(t(1), t(2)))
    assert rounded_right(1.0, ex, "rd", t) and rounded_right(1.0, ex, "rz", t) and rounded_right(1.0, ex, "rn", t)
    assert not rounded_right(1.0, ex, "ru", t) and rounded_right(up, ex, "ru", t)
    assert not rounded_right(up, ex, "rd", t) and not rounded_right(up, ex, "rn", t)
    tie = Exact(Fraction(1) + Fraction(1, 2 ** 24))       # half-way: to even (1.0)
    assert rounded_right(1.0, tie, "rn", t) and not rounded_right(up, tie, "rn", t)
    big = Exact(Fraction(float(np.finfo(t).max)) * 2)
    assert rounded_right(np.inf, big, "ru", t) and rounded_right(float(np.finfo(t).max), big, "rz", t)
    assert not rounded_right(np.inf, big, "rd", t)


# ---------------------------------------------------------------------------------------------- conversions


_LIMITS = {"int": (-(2 ** 31), 2 ** 31 - 1, 32), "uint": (0, 2 ** 32 - 1, 32), "ll": (-(2 ** 63), 2 ** 63 - 1, 64),
           "ull": (0, 2 ** 64 - 1, 64)}


def _round_int(q: Fraction, mode: str) -> int:
    if mode == "rz":
        return math.trunc(q)
    if mode == "rd":
        return math.floor(q)
    if mode == "ru":
        return math.ceil(q)
    return round(q)                                      # Fraction: halves to even


def _float_to_int(x: float, src: str, dest: str, mode: str) -> int:
    lo, hi, bits = _LIMITS[dest]
    if math.isnan(x):
        k = 0 if src == "float" and bits == 32 else 1 << (bits - 1)
    elif math.isinf(x):
        k = hi if x > 0 else lo
    else:
        k = min(max(_round_int(Fraction(x), mode), lo), hi)
    k &= (1 << bits) - 1                                 # the bits, read back as the signed type
    return k - (1 << bits) if k >> (bits - 1) else k


CONVERSIONS = sorted(n for n in SIGNATURES if n[-3:-1] == "_r" and "2" in n and not n.startswith("float2half"))


@pytest.mark.parametrize("name", CONVERSIONS)
def test_conversions_round_saturate_and_map_nan_as_ptx_cvt_does(ks, name):
    src, rest = name.split("2", 1)
    dest, mode = rest.rsplit("_", 1)
    args = inputs(name)
    if src in ("ll", "ull"):                    # float64 rounding would land on a float32 midpoint
        edges = [2 ** 62 + 2 ** 38 + 1, -(2 ** 62 + 2 ** 38 + 1), 2 ** 63 - 1, -(2 ** 63), 2 ** 53 + 1]
        if src == "ull":
            edges += [-(2 ** 63) + 2 ** 39 + 1, -1]                # 2**63 + 2**39 + 1 and 2**64 - 1 as bits
        args[0][-len(edges):] = np.array(edges, np.int64)
    if src in ("float", "double"):
        t = np.float32 if src == "float" else np.float64
        edges = [2 ** 31 - 0.5, 2 ** 31 + 0.5, -(2 ** 31) - 0.5, -(2 ** 31) + 0.5, 2 ** 32 - 0.5, 2 ** 32,
                 -0.5, -0.49, 0.5, 2.5, -2.5, 2 ** 63 - 1024, 2 ** 63, 2 ** 64 - 2048, -(2 ** 63) - 4096]
        args[0][-len(edges):] = np.array(edges, np.float64).astype(t)
    r = run(ks, name, args)
    assert r.dtype == SIGNATURES[name][1][0]
    bad = []
    for k in range(r.size):
        x = args[0][k]
        if dest in _LIMITS:                                       # float -> integer
            want = _float_to_int(float(x), src, dest, mode)
            if int(r[k]) != want:
                bad.append(f"{name}({x!r}) gave {r[k]}, not {want}")
            continue
        t = np.float32 if dest == "float" else np.float64
        if src == "double":
            kind, *rest_ = expected("double2float", mode, [float(x)], t)
            if kind == "special":
                ok = (np.isnan(rest_[0]) and np.isnan(r[k])) or rest_[0] == r[k]
            else:
                ok = rounded_right(r[k], rest_[0], mode, t) and (r[k] != 0 or np.signbit(r[k]) == rest_[1])
        else:
            value = int(x) & ((1 << (8 * x.itemsize)) - 1) if src in ("uint", "ull") else int(x)
            ok = rounded_right(r[k], Exact(Fraction(value)), mode, t) and not (r[k] == 0 and np.signbit(r[k]))
        if not ok:
            bad.append(f"{name}({x!r}) gave {r[k]!r}")
    assert bad[:5] == []
