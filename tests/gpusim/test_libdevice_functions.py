"""libdevice's math functions without a ``math`` counterpart, and the ``fast_*`` approximations, run in kernels
on gpusim. References come from Python's ``math`` module and exact rationals: inverse functions through
their forward functions (``erf(erfinv(y)) == y``), ``sinpi`` through an exactly reduced argument, rounding
functions through ``fractions.Fraction``; special values from C and CUDA's math documentation. gpusim
computes these close to the exact value, so the tolerances are a few ulps (libdevice itself is within its
documented bounds of those; the GPU check measures the difference)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from libdevice_cases import inputs, kernels, outputs

import gpusim

NAMES = ["sinpi", "sinpif", "cospi", "cospif", "sincospi", "sincos", "sincosf", "erfinv", "erfinvf", "erfcinv",
         "erfcinvf", "erfcx", "erfcxf", "normcdf", "normcdff", "normcdfinv", "normcdfinvf", "exp10", "exp10f",
         "rsqrt", "rsqrtf", "rcbrt", "rcbrtf", "powi", "powif", "fdim", "logb", "logbf", "ilogb", "ilogbf",
         "round", "roundf", "rint", "nearbyintf", "llrint", "llround", "llroundf", "saturatef", "signbitd",
         "signbitf", "remquo", "remquof", "modf", "frexpf", "scalbnf", "fast_expf", "fast_exp10f", "fast_logf",
         "fast_log2f", "fast_log10f", "fast_sinf", "fast_cosf", "fast_tanf", "fast_powf", "fast_fdividef",
         "fast_sincosf", "j0", "j1", "y0", "y1", "jn", "yn", "j0f", "y1f", "jnf", "ynf"]


@pytest.fixture(scope="module")
def ks(tmp_path_factory):
    return kernels(NAMES, tmp_path_factory.mktemp("functions"))


def run(ks, name, *args):
    args = [np.asarray(a) for a in args]
    outs = outputs(name, args[0].size)
    assert gpusim.launch(ks[name], (args[0].size + 127) // 128, 128, outs + args).faults == []
    return outs if len(outs) > 1 else outs[0]


def ulps(got, want, t) -> np.ndarray:
    """|got - want| in ulps of ``want`` in type ``t`` (want computed in float64 or better); NaN/inf must match."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    same_special = (np.isnan(got) & np.isnan(want)) | ((got == want) & ~np.isfinite(want))
    with np.errstate(all="ignore"):
        spacing = np.spacing(np.abs(want).astype(t)).astype(np.float64)
        d = np.abs(got - want) / np.maximum(spacing, float(np.finfo(t).smallest_subnormal))
    return np.where(same_special, 0.0, np.where(np.isfinite(want) | np.isfinite(got), d, np.inf))


def _sinpi_exact(x: float, shift: Fraction = Fraction(0)) -> float:
    """sin(pi (x + shift)) with x + shift reduced exactly (Fraction) to [-1/4, 1/4] and a quarter turn."""
    q = Fraction(x) + shift
    n = round(2 * q)
    f = float(q - Fraction(n, 2))
    s, c = math.sin(math.pi * f), math.cos(math.pi * f)
    return [s, c, -s, -c][n % 4]


def test_sinpi_and_cospi_reduce_exactly(ks):
    x = np.array([0.1, 0.25, 1 / 3, 0.5, 1.0, 2.5, -3.0, 1e6 + 0.5, 123456.789, 2.0 ** 60, -0.0, 7.0, 1e-300])
    s, c = run(ks, "sinpi", x), run(ks, "cospi", x)
    assert ulps(s, [_sinpi_exact(v) for v in x], np.float64).max() <= 2
    assert ulps(c, [_sinpi_exact(v, Fraction(1, 2)) for v in x], np.float64).max() <= 2
    assert s[4] == 0 and not np.signbit(s[4]) and s[6] == 0 and np.signbit(s[6]) and np.signbit(s[10])
    assert c[3] == 0 and not np.signbit(c[3])                    # cospi(1/2) is +0
    assert s[3] == 1 and c[4] == -1 and s[11] == 0
    both = run(ks, "sincospi", x)
    assert np.array_equal(both[0], s) and np.array_equal(both[1], c)
    xf = np.linspace(-4, 4, 257).astype(np.float32)
    sf = run(ks, "sinpif", xf)
    assert ulps(sf, [_sinpi_exact(float(v)) for v in xf], np.float32).max() <= 1
    assert np.isnan(run(ks, "cospif", np.array([np.inf, np.nan], np.float32))).all()


def test_sincos_is_sin_and_cos(ks):
    x = np.linspace(-10, 10, 101)
    s, c = run(ks, "sincos", x)
    assert ulps(s, [math.sin(v) for v in x], np.float64).max() <= 1
    assert ulps(c, [math.cos(v) for v in x], np.float64).max() <= 1
    sf, cf = run(ks, "sincosf", x.astype(np.float32))
    assert ulps(sf, [math.sin(float(np.float32(v))) for v in x], np.float32).max() <= 2


def test_inverse_error_functions_invert_erf_and_erfc(ks):
    y = np.concatenate([np.linspace(-0.999, 0.999, 201), [1 - 1e-12, -1 + 1e-15, 0.0]])
    x = run(ks, "erfinv", y)
    assert np.allclose([math.erf(v) for v in x[:201]], y[:201], rtol=4e-16, atol=1e-300)
    assert abs(math.erfc(x[201]) - 1e-12) / 1e-12 < 1e-3            # 1 - y is only that exact
    assert x[-1] == 0
    assert run(ks, "erfinv", np.array([1.0, -1.0, 1.5])).tolist()[:2] == [np.inf, -np.inf]
    z = np.concatenate([10.0 ** -np.arange(0, 300, 7.0), [5e-324, 1.0, 1.5, 1.999]])
    x = run(ks, "erfcinv", z)
    ref = np.array([math.erfc(v) for v in x])
    inherent = (2 * x * x + 4) * 2.0 ** -52          # erfc's own sensitivity to the last bit of x
    assert (np.abs(ref[:-4] / z[:-4] - 1) <= inherent[:-4]).all()
    assert np.allclose(ref[-2:], z[-2:], rtol=1e-14)
    assert x[-3] == 0 and 26 < x[-4] < 28
    e = run(ks, "erfcinv", np.array([0.0, 2.0, -0.1, 2.1]))
    assert e[0] == np.inf and e[1] == -np.inf and np.isnan(e[2:]).all()
    yf = np.linspace(-0.99, 0.99, 99).astype(np.float32)
    assert ulps(run(ks, "erfinvf", yf), run(ks, "erfinv", yf.astype(np.float64)), np.float32).max() <= 0.5
    zf = np.array([1e-30, 1e-10, 0.3, 1.7], np.float32)
    assert ulps(run(ks, "erfcinvf", zf), run(ks, "erfcinv", zf.astype(np.float64)), np.float32).max() <= 0.5


def _erfcx_continued_fraction(x: float) -> float:
    """exp(x*x) erfc(x) from erfc's continued fraction (Laplace), evaluated from the tail, for x >= 2."""
    t = x
    for k in range(4000, 0, -1):
        t = x + (k / 2) / t
    return 1 / (math.sqrt(math.pi) * t)


def test_erfcx_and_normcdf_keep_their_precision_in_the_tails(ks):
    x = np.linspace(-5, 5, 41)
    assert ulps(run(ks, "erfcx", x), [math.exp(v * v) * math.erfc(v) for v in x], np.float64).max() <= 40
    big = np.array([3.0, 12.0, 30.0, 100.0, 1e10, 1e300, np.inf])
    want = [_erfcx_continued_fraction(v) for v in big[:-1]] + [0.0]
    assert ulps(run(ks, "erfcx", big), want, np.float64).max() <= 2
    assert run(ks, "erfcx", np.array([-27.0]))[0] == np.inf
    x = np.linspace(-8, 8, 65)
    assert np.allclose(run(ks, "normcdf", x), [0.5 * math.erfc(-v / math.sqrt(2)) for v in x], rtol=3e-14)
    tail = run(ks, "normcdf", np.array([-30.0, -40.0, 40.0, -np.inf, np.inf]))
    assert abs(tail[0] / 4.906713927148187e-198 - 1) < 1e-12 and tail[1] == 0 and tail[2] == 1
    assert tail[3] == 0 and tail[4] == 1
    p = np.concatenate([10.0 ** -np.arange(1, 300, 11.0), [0.5, 0.9, 0.999999]])
    back = run(ks, "normcdf", run(ks, "normcdfinv", p))
    assert np.allclose(back, p, rtol=1e-12)
    xf = np.linspace(-5, 5, 21).astype(np.float32)
    assert ulps(run(ks, "erfcxf", xf), run(ks, "erfcx", xf.astype(np.float64)), np.float32).max() <= 0.5
    assert ulps(run(ks, "normcdff", xf), run(ks, "normcdf", xf.astype(np.float64)), np.float32).max() <= 0.5


def test_powers_roots_and_differences(ks):
    x = np.array([0.5, 2.0, 3.0, 1e-300, 7.25, 0.0, -0.0, np.inf], np.float64)
    assert ulps(run(ks, "exp10", np.array([-300.0, -1.5, 0.0, 2.0, 300.0])), [1e-300, 10 ** -1.5, 1.0, 100.0, 1e300],
                np.float64).max() <= 1
    assert run(ks, "exp10f", np.array([3.0, -2.0], np.float32)).tolist() == [1000.0, np.float32(0.01)]
    assert ulps(run(ks, "rsqrt", x[:5]), [1 / math.sqrt(v) for v in x[:5]], np.float64).max() <= 1
    r = run(ks, "rsqrt", x[5:])
    assert r[0] == np.inf and r[1] == -np.inf and r[2] == 0
    rc = run(ks, "rcbrt", x[:5])                         # r**3 * x == 1 within 2 ulps of r (exactly checked)
    assert all(abs(Fraction(float(r)) ** 3 * Fraction(float(v)) - 1) <= 6 * Fraction(2) ** -53 for r, v in zip(rc, x))
    assert run(ks, "rsqrtf", np.array([4.0, 0.25], np.float32)).tolist() == [0.5, 2.0]
    n = np.array([0, 1, -1, 3, 10, -2, 2, 5], np.int32)
    assert run(ks, "powi", -x, n).tolist()[:5] == [1.0, -2.0, -1 / 3, 0.0, 7.25 ** 10]
    assert run(ks, "powif", np.array([2.0, 1.5], np.float32), np.array([-3, 2], np.int32)).tolist() == [0.125, 2.25]
    a, b = np.array([3.0, 1.0, np.nan, 5.0, -0.0]), np.array([1.0, 3.0, 1.0, np.nan, 0.0])
    d = run(ks, "fdim", a, b)
    assert d[0] == 2 and d[1] == 0 and not np.signbit(d[1]) and np.isnan(d[2:4]).all() and d[4] == 0


def test_exponents_rounding_and_sign(ks):
    x = np.array([1.0, 0.75, 3e-310, 1e300, -8.0, 0.0, np.inf, np.nan], np.float64)
    lb, ilb = run(ks, "logb", x), run(ks, "ilogb", x)
    want = [math.frexp(v)[1] - 1 for v in x[:5]]
    assert lb[:5].tolist() == want and ilb[:5].tolist() == want
    assert lb[5] == -np.inf and lb[6] == np.inf and np.isnan(lb[7])
    assert ilb[5:].tolist() == [-(2 ** 31), 2 ** 31 - 1, -(2 ** 31)]
    v = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 2.0 ** 52 + 1, -0.0, 1e300, np.nan], np.float64)
    away = [float(math.floor(abs(Fraction(t)) + Fraction(1, 2))) * math.copysign(1, t) for t in v[:-2]]
    assert run(ks, "round", v)[:-2].tolist() == away
    assert np.signbit(run(ks, "round", v)[7])
    assert run(ks, "rint", v)[:7].tolist() == [float(round(Fraction(t))) for t in v[:7]]    # halves to even
    assert run(ks, "nearbyintf", v[:5].astype(np.float32)).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]
    ll = run(ks, "llround", v)
    assert ll[:5].tolist() == [1, 2, 3, -1, -3] and ll[8] == 2 ** 63 - 1 and ll[9] == -(2 ** 63)   # NaN: the H200
    assert run(ks, "llrint", v)[:5].tolist() == [0, 2, 2, 0, -2]
    assert run(ks, "llroundf", np.array([-2.5, 1e20], np.float32)).tolist() == [-3, 2 ** 63 - 1]
    s = run(ks, "saturatef", np.array([-1.0, -0.0, 0.5, 2.0, np.nan, np.inf], np.float32))
    assert s.tolist() == [0.0, 0.0, 0.5, 1.0, 0.0, 1.0] and not np.signbit(s).any()
    assert run(ks, "signbitd", np.array([-0.0, 0.0, -np.nan, -1.0, 1.0])).tolist() == [1, 0, 1, 1, 0]
    assert run(ks, "signbitf", np.array([-0.0, 2.0], np.float32)).tolist() == [1, 0]


def test_remquo_modf_frexp_scalbn(ks):
    x = np.array([7.0, -7.0, 5.5, 1e300, 3.0, np.inf, 1.0, 10.0], np.float64)
    y = np.array([2.0, 2.0, 1.0, 3.0, np.inf, 1.0, 0.0, 4.0], np.float64)
    r, q = run(ks, "remquo", x, y)
    assert r[:5].tolist() == [math.remainder(a, b) for a, b in zip(x[:5], y[:5])]
    assert np.isnan(r[5:7]).all() and r[7] == 2.0
    quotients = [round(Fraction(a) / Fraction(b)) for a, b in zip(x[:4], y[:4])]           # halves to even
    assert q[:4].tolist() == [math.copysign(abs(n) % 8, n) for n in quotients]
    rf, qf = run(ks, "remquof", x[:3].astype(np.float32), y[:3].astype(np.float32))
    assert rf.tolist() == r[:3].tolist() and qf.tolist() == q[:3].tolist()
    f, i = run(ks, "modf", np.array([2.75, -2.75, np.inf, -0.5]))
    assert f.tolist()[:2] == [0.75, -0.75] and i.tolist()[:2] == [2.0, -2.0] and f[2] == 0 and i[2] == np.inf
    m, e = run(ks, "frexpf", np.array([8.0, 0.3, 1e-40], np.float32))
    assert [math.ldexp(float(a), int(b)) for a, b in zip(m, e)] == [8.0, float(_f32(0.3)), float(_f32(1e-40))]
    assert ((0.5 <= m) & (m < 1)).all()
    scaled = run(ks, "scalbnf", np.array([1.5, 1.0], np.float32), np.array([4, -149], np.int32))
    assert scaled.tolist() == [24.0, 2 ** -149]


def _f32(v) -> np.float32:
    return np.float32(v)


def test_fast_functions_round_the_argument_product_as_the_gpu_does(ks):
    """``__expf(x)`` is ``2^(x * log2(e))`` with the product rounded to float32: at large x that rounding
    is most of the error the CUDA guide documents (2 + floor(|1.173 x|) ulp), and gpusim keeps it."""
    x = np.array([0.5, 10.0, 50.0, 80.0, -80.0, 88.0, -100.0], np.float32)
    got = run(ks, "fast_expf", x)
    log2e = _f32(1.44269502)
    model = [_f32(2.0 ** float(_f32(v * log2e))) for v in x]
    assert got.tolist() == model
    exact = [math.exp(float(v)) for v in x]
    assert (ulps(got, exact, np.float32) <= 2 + np.floor(np.abs(1.173 * x))).all()
    assert ulps(got[3:4], exact[3:4], np.float32)[0] > 1, "the rounded product must show at x = 80"
    product = float(_f32(_f32(2) * _f32(3.32192802)))
    assert run(ks, "fast_exp10f", np.array([2.0], np.float32))[0] == _f32(2.0 ** product)
    y = np.array([0.5, 2.0, 10.0, 1e30, 1e-30], np.float32)
    assert ulps(run(ks, "fast_log2f", y), [math.log2(float(v)) for v in y], np.float32).max() <= 2
    assert ulps(run(ks, "fast_logf", y), [math.log(float(v)) for v in y], np.float32).max() <= 3
    assert ulps(run(ks, "fast_log10f", y), [math.log10(float(v)) for v in y], np.float32).max() <= 3
    t = np.linspace(-3, 3, 25).astype(np.float32)
    assert np.abs(run(ks, "fast_sinf", t) - np.sin(t.astype(np.float64))).max() <= 2.0 ** -21.41
    assert np.abs(run(ks, "fast_cosf", t) - np.cos(t.astype(np.float64))).max() <= 2.0 ** -21.19
    s, c = run(ks, "fast_sincosf", t)
    assert np.array_equal(s, run(ks, "fast_sinf", t)) and np.array_equal(c, run(ks, "fast_cosf", t))
    t64 = t.astype(np.float64)                              # sin's and cos's errors, over cos^2
    assert (np.abs(run(ks, "fast_tanf", t) - np.tan(t64)) <= 2.0 ** -20 / np.cos(t64) ** 2).all()
    assert ulps(run(ks, "fast_powf", np.array([2.0, 3.0], np.float32), np.array([10.0, 2.0], np.float32)),
                [1024.0, 9.0], np.float32).max() <= 2
    q = run(ks, "fast_fdividef", np.array([1.0, 3.0, 1.0, np.inf], np.float32),
            np.array([3.0, 2.0 ** 127, -(2.0 ** 127), 2.0 ** 127], np.float32))
    assert ulps(q[:1], [1 / 3], np.float32)[0] <= 2 and q[1] == 0 and q[2] == 0 and np.isnan(q[3])


def _j_integral(n: int, x: float) -> float:
    """J_n(x) = (1/pi) * integral over [0, pi] of cos(n t - x sin t): the trapezoid rule, which converges
    geometrically for this periodic integrand (a method independent of gpusim's series and recurrences)."""
    m = 4096
    t = np.linspace(0, np.pi, m + 1)
    f = np.cos(n * t - x * np.sin(t))
    return float((f.sum() - (f[0] + f[-1]) / 2) / m)


def test_bessel_functions_match_tables_an_integral_and_the_wronskian(ks):
    one = np.array([1.0])
    assert abs(run(ks, "j0", one)[0] - 0.7651976865579666) < 1e-16        # tabulated values
    assert abs(run(ks, "j1", one)[0] - 0.44005058574493355) < 1e-16
    assert abs(run(ks, "y0", one)[0] - 0.08825696421567696) < 1e-16
    assert abs(run(ks, "y1", one)[0] + 0.7812128213002887) < 1e-16
    x = np.array([0.01, 0.5, 2.4048, 7.0, 24.9, 25.1, 40.0, 300.0, 1000.0])
    for n in (0, 1, 2, 5, 13, 40):
        nn = np.full(x.size, n, np.int32)
        j, y = run(ks, "jn", nn, x), run(ks, "yn", nn, x)
        assert np.allclose(j, [_j_integral(n, v) for v in x], rtol=0, atol=4e-15), n
        j1, y1 = run(ks, "jn", nn + 1, x), run(ks, "yn", nn + 1, x)
        wronskian = (j1 * y - j * y1) * np.pi * x / 2                   # J_{n+1} Y_n - J_n Y_{n+1} = 2/(pi x)
        assert np.allclose(wronskian, 1, rtol=0, atol=1e-13), n
    neg = run(ks, "jn", np.array([-3, 3, 2], np.int32), np.array([2.0, -2.0, -2.0]))
    pos = run(ks, "jn", np.array([3], np.int32), np.array([2.0]))[0]
    assert np.isnan(neg[0])                                 # a negative order: NaN (libdevice's docs)
    assert neg.tolist()[1:] == [-pos, run(ks, "jn", np.array([2], np.int32), np.array([2.0]))[0]]
    orders, xs = [5, 3000], [1e-10, 30.0]
    tiny = run(ks, "jn", np.array(orders, np.int32), np.array(xs))
    leading = [float((Fraction(v) / 2) ** n / math.factorial(n)) for n, v in zip(orders, xs)]   # (x/2)^n / n!
    assert abs(tiny[0] - leading[0]) <= 1e-14 * leading[0]  # the next term is ~1e-21 smaller
    assert tiny[1] == 0                                     # 15^3000 / 3000! is about 1e-5600
    # Miller's recurrence overflows where one step grows more than 1e15-fold (k * 2/x): NaN, as on the H200
    # (jn(2, 0.0), jn(68, 1.03e-29) are NaN in its recorded results), though the true values are ~0
    over = run(ks, "jn", np.array([70, 2, 2, 68], np.int32), np.array([1e-300, 1e-160, 0.0, 1.03e-29]))
    assert np.isnan(over).all()
    assert run(ks, "yn", np.array([70, 2], np.int32), np.array([1e-300, 1e-160])).tolist() == [-np.inf] * 2
    assert np.isnan(run(ks, "yn", np.array([-2, 2], np.int32), np.array([1.0, -1.0]))).all()
    sp = run(ks, "y0", np.array([0.0, -1.0, np.inf, np.nan]))
    assert sp[0] == -np.inf and np.isnan(sp[1]) and sp[2] == 0 and np.isnan(sp[3])
    assert run(ks, "j0", np.array([0.0, np.inf]))[:2].tolist() == [1.0, 0.0]
    xf = np.array([0.5, 3.0, 30.0], np.float32)
    assert ulps(run(ks, "j0f", xf), run(ks, "j0", xf.astype(np.float64)), np.float32).max() <= 0.5
    assert ulps(run(ks, "y1f", xf), run(ks, "y1", xf.astype(np.float64)), np.float32).max() <= 0.5
    n3 = np.full(3, 3, np.int32)                            # jnf recurs in float32: a few ulps
    assert ulps(run(ks, "jnf", n3, xf), run(ks, "jn", n3, xf.astype(np.float64)), np.float32).max() <= 8


def test_all_inputs_of_the_shared_cases_run(ks):
    """Every function above on libdevice_cases' inputs (specials, pairs, random bits): no fault, no warning."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in NAMES:
            run(ks, name, *inputs(name, 256))
