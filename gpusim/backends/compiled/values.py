"""Per-lane code for the IR's values: constants, conversions and the arithmetic whose NumPy result needs
care in compiled code (wrapping integers, Python's floor division, shifts past the width, NaN-propagating
min/max). Every function returns the text of a numba expression of exactly the IR type.

The generated module imports ``numpy as np`` and ``gpusim.backends.compiled.rtlib as R``.
"""

from __future__ import annotations

import math

import numpy as np

from ...ir.types import Scalar, Type
from ...ir.values import nan_to_int

#: numba constructors of the IR's scalar types
CTOR = {"bool": "np.bool_", "int8": "np.int8", "int16": "np.int16", "int32": "np.int32", "int64": "np.int64",
        "uint8": "np.uint8", "uint16": "np.uint16", "uint32": "np.uint32", "uint64": "np.uint64",
        "float32": "np.float32", "float64": "np.float64"}


class NotCompiled(Exception):
    """A construct the compiled back end does not translate (yet): the message says which."""


def ctor(t: Type) -> str:
    if not isinstance(t, Scalar) or t.name not in CTOR:
        raise NotCompiled(f"values of type {t} are not compiled")
    return CTOR[t.name]


def const(value, t: Scalar) -> str:
    """A constant of type ``t`` (exactly its bits)."""
    if t.is_bool:
        return "True" if value else "False"
    if t.is_int:
        v = int(value)
        if t.name == "int64" and v == -(1 << 63):
            return "np.int64(-9223372036854775807 - 1)"
        return f"{ctor(t)}({v})"
    v = float(value)
    if math.isnan(v):
        return f"{ctor(t)}(np.nan)"
    if math.isinf(v):
        return f"{ctor(t)}({'-' if v < 0 else ''}np.inf)"
    return f"{ctor(t)}({v!r})"


def zero(t: Scalar) -> str:
    return const(0, t)


def cast(x: str, src: Scalar, dst: Scalar) -> str:
    """``gpusim.ir.values.convert`` per lane."""
    if src == dst:
        return x
    if dst.is_bool:
        return f"({x} != 0)" if not src.is_bool else x
    if dst.is_int and src.is_float:
        info = np.iinfo(dst.dtype)
        hi, lo = float(info.max), float(info.min)
        c = ctor(dst)
        big = const(info.max, dst)
        small = const(info.min, dst)
        nan = const(nan_to_int(src.dtype, dst.dtype), dst)
        return (f"({nan} if {x} != {x} else ({big} if {x} >= {hi!r} else ({small} if {x} <= {lo!r} "
                f"else {c}({x}))))")
    return f"{ctor(dst)}({x})"


def binary(op: str, a: str, b: str, t: Scalar, b_type: Scalar | None = None) -> str:
    """A pure binary operation (not integer division, not float powers)."""
    c = ctor(t)
    if op in ("add", "sub", "mul", "and", "or", "xor"):
        sym = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}[op]
        if t.is_bool or t.is_float or t.bits == 64:  # numba keeps these types; narrower ints widen
            return f"({a} {sym} {b})"
        return f"{c}({a} {sym} {b})"
    if op == "truediv":
        return f"({a} / {b})"
    if op in ("floordiv", "mod") and t.is_float:
        return f"{c}({a} {'//' if op == 'floordiv' else '%'} {b})"
    if op in ("lshift", "rshift"):
        bits = t.bits
        if op == "lshift":
            return f"({c}({a} << {b}) if (0 <= {b} and {b} < {bits}) else {c}(0))"
        if t.kind == "u":
            return f"({c}({a} >> {b}) if (0 <= {b} and {b} < {bits}) else {c}(0))"
        return f"({c}({a} >> {b}) if (0 <= {b} and {b} < {bits}) else ({c}(-1) if {a} < 0 else {c}(0)))"
    if op == "pow" and t.is_int:
        if t.name == "uint64":
            return f"R.ipowu64({a}, {b})"
        low = const(np.iinfo(t.dtype).min, t)
        return f"({low} if ({a} == 0 and {b} < 0) else {c}(R.ipow64(np.int64({a}), np.int64({b}))))"
    raise NotCompiled(f"the operation {op} on {t} is not compiled")


def int_divide(op: str, a: str, b: str, t: Scalar) -> str:
    """``a // b`` or ``a % b`` on integers, ``b`` known non-zero."""
    c = ctor(t)
    if t.name == "int64":
        return f"R.{'floordiv64' if op == 'floordiv' else 'mod64'}({a}, {b})"
    return f"{c}({a} {'//' if op == 'floordiv' else '%'} {b})"


def compare(op: str, a: str, b: str) -> str:
    sym = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[op]
    return f"({a} {sym} {b})"


def unary(op: str, x: str, t: Scalar) -> str:
    if op == "not" or (op == "invert" and t.is_bool):
        return f"(not {x})"
    if op == "neg":
        return f"{ctor(t)}(-{x})"
    return f"{ctor(t)}(~{x})"


def minmax(name: str, args: list[str], t: Scalar) -> str:
    """``np.minimum``/``np.maximum`` folded left: NaN propagates, and of two equal values the second wins."""
    sym = "<" if name == "min" else ">"
    code = args[0]
    for b in args[1:]:
        if t.is_float:
            code = f"R.{name}f({code}, {b})"
        else:
            code = f"({code} if {code} {sym} {b} else {b})"
    return code


def fpow_int(a: str, n: str, t: Scalar, scalar_path: bool) -> str:
    """``float ** int`` by repeated squaring in the float's type (``Runtime.fpow``)."""
    return f"R.fpow{t.bits}({a}, np.int64({n}), {scalar_path})"


def fma(a: str, b: str, c: str, t: Scalar) -> str:
    if t.bits == 64:
        return f"R.fma64({a}, {b}, {c})"
    return f"{ctor(t)}(np.float64({a}) * np.float64({b}) + np.float64({c}))"


#: intrinsics computed exactly in compiled code (the rest call NumPy, as the lanes back end does)
EXACT_INTRINSICS = {"math.sqrt", "math.fabs", "math.floor", "math.ceil", "math.trunc", "math.copysign",
                    "math.isnan", "math.isinf", "math.isfinite", "abs", "min", "max", "selp", "popc", "clz",
                    "ffs", "brev", "round"}


def intrinsic(name: str, args: list[str], arg_types: list[Scalar], t: Scalar) -> str:
    x = args[0] if args else ""
    at = arg_types[0] if arg_types else None
    if name == "math.sqrt":
        return f"{ctor(t)}(np.sqrt({x}))"
    if name in ("math.fabs", "abs"):
        return f"{ctor(t)}(abs({x}))"
    if name in ("math.floor", "math.ceil", "math.trunc"):
        return f"{ctor(t)}(np.{name[5:]}({x}))"
    if name == "math.copysign":
        return f"{ctor(t)}(np.copysign({x}, {args[1]}))"
    if name in ("math.isnan", "math.isinf", "math.isfinite"):
        return f"np.{name[5:]}({x})"
    if name in ("min", "max"):
        return minmax(name, args, t)
    if name == "selp":
        return f"({args[1]} if {x} else {args[2]})"
    if name in ("popc", "clz"):
        bits = at.bits
        fn = "R.popc64" if name == "popc" else f"{bits} - R.bitlen64"
        return f"{ctor(t)}({fn}(np.uint64({x}) if {bits} == 64 else np.int64({x}), {bits}))"
    if name == "ffs":
        bits = at.bits
        return f"np.uint32(R.ffs64(np.uint64({x}) if {bits} == 64 else np.int64({x}), {bits}))"
    if name == "brev":
        bits = 64 if at.name == "uint64" else 32
        src = f"np.uint64({x})" if bits == 64 else f"np.int64(np.uint32({x}))"
        return f"{ctor(t)}(R.brev64({src}, {bits}))"
    if name == "round":
        return f"np.int64(np.rint({x}))"
    raise NotCompiled(f"the intrinsic {name} is not compiled")


#: the NumPy code the lanes back end runs for each intrinsic it does not compute in compiled code, over
#: whole lane vectors: ``{0}``, ``{1}`` are the argument arrays, ``{dt}`` the result dtype object
NUMPY_INTRINSICS = {
    "math.exp": "np.exp({0})", "math.exp2": "np.exp2({0})", "math.expm1": "np.expm1({0})",
    "math.log": "np.log({0})", "math.log2": "np.log2({0})", "math.log10": "np.log10({0})",
    "math.log1p": "np.log1p({0})", "math.sin": "np.sin({0})", "math.cos": "np.cos({0})",
    "math.tan": "np.tan({0})", "math.asin": "np.arcsin({0})", "math.acos": "np.arccos({0})",
    "math.atan": "np.arctan({0})", "math.atan2": "np.arctan2({0}, {1})", "math.sinh": "np.sinh({0})",
    "math.cosh": "np.cosh({0})", "math.tanh": "np.tanh({0})", "math.asinh": "np.arcsinh({0})",
    "math.acosh": "np.arccosh({0})", "math.atanh": "np.arctanh({0})", "math.pow": "np.power({0}, {1})",
    "math.hypot": "np.hypot({0}, {1})", "math.fmod": "np.fmod({0}, {1})", "math.radians": "np.radians({0})",
    "math.degrees": "np.degrees({0})", "math.nextafter": "np.nextafter({0}, {1})", "math.cbrt": "np.cbrt({0})",
    "math.erf": "ix.erf({0}, {dt})", "math.erfc": "ix.erfc({0}, {dt})", "math.gamma": "ix.gamma({0}, {dt})",
    "math.lgamma": "ix.lgamma({0}, {dt})", "math.remainder": "ix.remainder({0}, {1}, {dt})",
    "math.ldexp": "ix.ldexp({0}, {1}, {dt})", "math.frexp": "ix.frexp({0}, {dt})",
    "math.modf": "ix.modf({0}, {dt})", "round_ndigits": "ix.round_ndigits({0}, {1}, {dt})",
    "float_pow": "np.power({0}, {1})",
}
