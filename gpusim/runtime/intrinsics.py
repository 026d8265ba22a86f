"""Value-level intrinsics on lane vectors: math functions, casts, bit operations, warp shuffles and votes.

Warp operations work on the chunk's lane layout: lane ``k`` is thread ``k % T`` of block ``k // T``; its warp
is ``(k % T) // 32`` of that block and its lane id ``(k % T) % 32``. A partial last warp has fewer lanes.
"""

from __future__ import annotations

import math

import numpy as np

_FLOAT_OUT = {"sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
              "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "pow", "fabs",
              "erf", "erfc", "gamma", "lgamma", "hypot", "copysign", "fmod", "radians", "degrees", "ldexp",
              "remainder"}
_UFUNCS = {
    "sqrt": np.sqrt, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "pow": np.power,
    "fabs": np.fabs, "hypot": np.hypot, "copysign": np.copysign, "fmod": np.fmod, "radians": np.radians,
    "degrees": np.degrees, "ldexp": np.ldexp, "remainder": np.frompyfunc(math.remainder, 2, 1),  # IEEE 754
    "erf": np.frompyfunc(math.erf, 1, 1), "erfc": np.frompyfunc(math.erfc, 1, 1),
    "gamma": np.frompyfunc(math.gamma, 1, 1), "lgamma": np.frompyfunc(math.lgamma, 1, 1),
}


def _float_dtype(*xs) -> np.dtype:
    """numba's rule for math functions: float32 stays float32 (if every float argument is float32 or
    narrower), integers and float64 give float64."""
    kinds = [np.asarray(x).dtype for x in xs]
    if all(d.kind == "f" and d.itemsize <= 4 for d in kinds):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def math_fn(name: str, *args):
    if name in ("floor", "ceil", "trunc"):
        x = args[0]
        f = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}[name]
        if np.asarray(x).dtype.kind in "iub":  # numba-cuda: math.floor(int) is float64
            return x.astype(np.float64) if isinstance(x, np.ndarray) else np.float64(x)
        return f(x)  # numba-cuda keeps the float type (math.floor(float32) is float32 on the GPU)
    if name in ("isnan", "isinf", "isfinite"):
        return {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}[name](args[0])
    if name == "ldexp":
        dt = _float_dtype(args[0])
        return np.ldexp(np.asarray(args[0], dt) if isinstance(args[0], np.ndarray) else dt.type(args[0]),
                        args[1])
    dt = _float_dtype(*args)
    conv = [a.astype(dt, copy=False) if isinstance(a, np.ndarray) else dt.type(a) for a in args]
    out = _UFUNCS[name](*conv)
    if isinstance(out, np.ndarray) and out.dtype == object:
        return out.astype(dt)
    if not isinstance(out, (np.ndarray, np.generic)) or (isinstance(out, np.generic) and out.dtype != dt):
        return dt.type(out)
    return out


def cast(x, dtype: np.dtype):
    if isinstance(x, np.ndarray):
        if dtype.kind in "iu" and x.dtype.kind == "f":
            return np.trunc(x).astype(dtype)
        return x.astype(dtype)
    if dtype.kind in "iu" and isinstance(x, (float, np.floating)):
        x = math.trunc(x) if math.isfinite(x) else 0
        return dtype.type(np.int64(x)) if dtype.kind == "i" else dtype.type(np.uint64(x & 0xFFFFFFFFFFFFFFFF))
    if dtype.kind in "iu" and isinstance(x, (int, np.integer)):
        bits = dtype.itemsize * 8
        v = int(x) & ((1 << bits) - 1)
        if dtype.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
        return dtype.type(v)
    return dtype.type(x)


def to_float(x):
    """``float(x)``: float32 stays float32 in numba-cuda; integers become float64."""
    if np.asarray(x).dtype.kind == "f":
        return x
    return cast(x, np.dtype(np.float64))


def round_(x, nd=None):
    if nd is None:
        r = np.rint(x)
        return r.astype(np.int64) if isinstance(r, np.ndarray) else np.int64(r)
    return np.round(x, int(nd))


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
