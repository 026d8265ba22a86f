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
    "degrees": np.degrees, "ldexp": np.ldexp, "remainder": np.remainder,
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
        if np.asarray(x).dtype.kind in "iub":
            return x
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


def round_(x, nd=None):
    if nd is None:
        r = np.rint(x)
        return r.astype(np.int64) if isinstance(r, np.ndarray) else np.int64(r)
    return np.round(x, int(nd))


# ---------------------------------------------------------------------------------------------- bits


def _uint_view(x) -> tuple[np.ndarray, int]:
    a = np.asarray(x)
    bits = 64 if a.dtype.itemsize == 8 else 32
    u = a.astype(np.uint64 if bits == 64 else np.uint32)
    return u, bits


def bits(kind: str, x):
    u, nbits = _uint_view(x)
    scalar = np.ndim(x) == 0
    if kind == "popc":
        r = np.bitwise_count(u).astype(np.int32)
    elif kind == "brev":
        r = np.zeros_like(u)
        v = u.copy()
        for _ in range(nbits):
            r = (r << u.dtype.type(1)) | (v & u.dtype.type(1))
            v = v >> u.dtype.type(1)
        r = r.astype(np.uint32 if nbits == 32 else np.uint64)
    elif kind == "clz":
        r = np.full(u.shape, nbits, np.int32)
        v = u.copy()
        n = np.zeros(u.shape, np.int32)
        while np.any(v):
            nz = v != 0
            n = n + nz
            v = v >> u.dtype.type(1)
        r = (nbits - n).astype(np.int32)
    elif kind == "ffs":
        r = np.zeros(u.shape, np.int32)
        v = u.copy()
        found = np.zeros(u.shape, bool)
        for i in range(nbits):
            hit = ~found & ((v >> u.dtype.type(i)) & u.dtype.type(1)).astype(bool)
            r = np.where(hit, i + 1, r)
            found |= hit
        r = r.astype(np.int32)
    else:  # pragma: no cover
        raise ValueError(kind)
    r = r.astype(np.asarray(x).dtype)  # numba-cuda: the result has the argument's type
    return r[()] if scalar else r
