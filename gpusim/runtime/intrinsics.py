"""Value-level intrinsics on lane vectors (or NumPy scalars) whose arguments already have their IR types:
math functions NumPy has no ufunc for (or computes differently at special values), rounding, bit counts.

Special values follow the C library as the GPU's libdevice computes them: ``gamma`` is +-inf at +-0 and NaN
at negative integers; ``lgamma`` is +inf at 0 and at negative integers; ``remainder(x, 0)`` and
``remainder(inf, y)`` are NaN; overflow gives inf, never an exception.
"""

from __future__ import annotations

import cmath
import math

import numpy as np


def _elementwise(f, x, dtype: np.dtype, *more):
    """``f`` on each element (Python floats), the result in ``dtype``; scalars stay scalars."""
    if isinstance(x, np.ndarray) or any(isinstance(m, np.ndarray) for m in more):
        vec = np.frompyfunc(f, 1 + len(more), 1)
        return np.asarray(vec(x, *more), dtype=np.float64).astype(dtype)
    return dtype.type(f(x, *more))


def _gamma(x: float) -> float:
    try:
        return math.gamma(x)
    except ValueError:          # poles: 0 and the negative integers
        if x == 0:
            return math.copysign(math.inf, x)
        return math.nan if x != -math.inf else math.nan
    except OverflowError:
        return math.inf


def _lgamma(x: float) -> float:
    try:
        return math.lgamma(x)
    except ValueError:
        return math.inf
    except OverflowError:
        return math.inf


def _remainder(x: float, y: float) -> float:
    try:
        return math.remainder(x, y)
    except ValueError:          # y == 0 or x infinite
        return math.nan


#: cmath function -> the NumPy ufunc that stands in where CPython's cmath raises (log(0), overflow) and
#: numba-cuda returns a value
_CMATH_NUMPY = {"sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log10": np.log10, "sin": np.sin, "cos": np.cos,
                "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
                "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
                "phase": np.angle, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}
_cmath_ufuncs: dict[str, np.ufunc] = {}


def _cmath_element(name: str):
    f = getattr(cmath, name)
    stand_in = _CMATH_NUMPY.get(name)

    def one(*args):
        try:
            return f(*args)
        except (ValueError, OverflowError):
            if stand_in is None:
                return complex("nan+nanj")
            with np.errstate(all="ignore"):
                return stand_in(*args)
    return one


def cmath_fn(name: str, dtype: np.dtype, *args):
    """``cmath.<name>`` element by element with CPython's own cmath, whose special values (infinities, NaNs,
    signed zeros) numba-cuda's cmath follows; the result in ``dtype``."""
    uf = _cmath_ufuncs.get(name)
    if uf is None:
        uf = _cmath_ufuncs[name] = np.frompyfunc(_cmath_element(name), len(args), 1)
    out = np.asarray(uf(*args)).astype(dtype)
    return out if out.ndim else out[()]


def make_complex(re, im, dtype: np.dtype):
    """``complex(re, im)``: the parts set one by one (``re + 1j * im`` would turn an infinite part into NaNs)."""
    shape = np.broadcast(re, im).shape
    out = np.empty(shape, dtype)
    out.real = re
    out.imag = im
    return out if shape else out[()]


def erf(x, dtype: np.dtype):
    return _elementwise(math.erf, x, dtype)


def erfc(x, dtype: np.dtype):
    return _elementwise(math.erfc, x, dtype)


def gamma(x, dtype: np.dtype):
    return _elementwise(_gamma, x, dtype)


def lgamma(x, dtype: np.dtype):
    return _elementwise(_lgamma, x, dtype)


def remainder(x, y, dtype: np.dtype):
    """IEEE 754 remainder: ``x - n*y`` for ``n`` the integer nearest ``x/y`` (ties to even)."""
    return _elementwise(_remainder, x, dtype, y)


def ldexp(x, n, dtype: np.dtype):
    with np.errstate(all="ignore"):
        r = np.ldexp(x, np.asarray(n, np.int32) if isinstance(n, np.ndarray) else np.int32(n))
    return r.astype(dtype) if isinstance(r, np.ndarray) else dtype.type(r)


def frexp(x, dtype: np.dtype):
    """(mantissa in [0.5, 1) of ``dtype``, int32 exponent)."""
    m, e = np.frexp(x)
    if isinstance(m, np.ndarray):
        return m.astype(dtype), e.astype(np.int32)
    return dtype.type(m), np.int32(e)


def modf(x, dtype: np.dtype):
    """(fractional part, integral part), both of ``dtype``."""
    f, i = np.modf(x)
    if isinstance(f, np.ndarray):
        return f.astype(dtype), i.astype(dtype)
    return dtype.type(f), dtype.type(i)


def round(x, dtype: np.dtype):  # noqa: A001 - the builtin's name, as the IR intrinsic is named
    """``round(x)``: to the nearest integer, halves to even, as an int64."""
    r = np.rint(x)
    return r.astype(np.int64) if isinstance(r, np.ndarray) else np.int64(r)


def round_ndigits(x, nd, dtype: np.dtype):
    """``round(x, ndigits)`` as numba-cuda computes it (``cudaimpl.round_to_impl``): in float64 whatever x's
    type, x scaled by 10.0 ** ndigits (in two steps past 22 digits), rounded half to even, scaled back; an
    infinite or NaN x, or one whose scaling overflows, is returned as it is."""
    x64 = np.asarray(x, dtype=np.float64)
    nd = np.asarray(nd).astype(np.int64)
    with np.errstate(all="ignore"):
        pos = nd >= 0
        big = nd > 22
        pow1 = np.where(pos, 10.0 ** np.where(big, nd - 22, nd).astype(np.float64), 10.0 ** (-nd).astype(np.float64))
        pow2 = np.where(pos & big, 1e22, 1.0)
        scaled = (x64 * pow1) * pow2
        y = np.where(pos, scaled, x64 / pow1)
        z = np.round(y)
        z = np.where(np.abs(y - z) == 0.5, 2.0 * np.round(y / 2.0), z)
        z = np.where(pos, (z / pow2) / pow1, z * pow1)
        r = np.where(~np.isfinite(x64) | (pos & np.isinf(scaled)), x64, z)
    return r.astype(dtype) if r.ndim else dtype.type(r[()])


# ---------------------------------------------------------------------------------------------- bits


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits(kind: str, x):
    """popc/clz keep the argument's type and width; ffs gives uint32; brev exists for uint32 and uint64 only,
    so any other integer is converted to uint32 first (all as numba-cuda types them on the GPU)."""
    a = np.asarray(x)
    scalar = a.ndim == 0
    if kind == "brev":
        ut = np.uint64 if a.dtype == np.uint64 else np.uint32
    else:
        ut = _UNSIGNED[a.dtype.itemsize]
    u = a.astype(ut)
    nbits = 8 * np.dtype(ut).itemsize
    one = ut(1)
    if kind == "popc":
        r = np.bitwise_count(u).astype(a.dtype)
    elif kind == "brev":
        r = np.zeros_like(u)
        v = u.copy()
        for _ in range(nbits):
            r = (r << one) | (v & one)
            v = v >> one
    elif kind in ("clz", "ffs"):
        length = np.zeros(u.shape, np.int64)  # bit length: index of the highest set bit + 1
        low = np.zeros(u.shape, np.int64)     # 1 + index of the lowest set bit (0 when none)
        for i in range(nbits - 1, -1, -1):
            bit = ((u >> ut(i)) & one).astype(bool)
            length = np.where(bit & (length == 0), i + 1, length)
            low = np.where(bit, i + 1, low)
        r = (nbits - length).astype(a.dtype) if kind == "clz" else low.astype(np.uint32)
    else:  # pragma: no cover
        raise ValueError(kind)
    return r[()] if scalar else r


def popc(x, dtype: np.dtype):
    return bits("popc", x)


def clz(x, dtype: np.dtype):
    return bits("clz", x)


def ffs(x, dtype: np.dtype):
    return bits("ffs", x)


def brev(x, dtype: np.dtype):
    return bits("brev", x)
