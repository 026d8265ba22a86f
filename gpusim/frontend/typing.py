"""numba-cuda's typing rules, as the front end applies them: which signature an operation or call gets.

numba types a call by trying the signatures ("cases") a function declares and taking the one whose argument
conversions are cheapest: exact < promote < safe < unsafe, counted per argument, the fewest unsafe first,
then the fewest safe, then the fewest promotions; on a tie the first case in order wins. The conversions
between scalar types come from a short list of rules (``_RULES``, numba's ``typeconv/rules.py``) closed under
composition (a path is as lossy as its lossiest step). The cases below are numba-cuda 0.30's
(``typing/builtins.py``, ``cudamath.py``, ``cudadecl.py`` and the float16 overloads of ``cuda_fp16``);
``tests/gpusim/test_typing.py`` checks them against numba-cuda's own typing context, and
``docs/gpu-semantics.md`` records the result types read on a GPU.

Literals are typed as numba types them: ``int`` as int64 (uint64 from 2**63), ``float`` as float64.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from ..ir.types import (
    BOOL,
    COMPLEX64,
    COMPLEX128,
    COMPLEXES,
    FLOAT16,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    SCALARS,
    SIGNED,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    UNSIGNED,
    Array,
    Optional,
    Scalar,
    Tuple,
    Type,
    optional,
)


class Conversion(IntEnum):
    """How lossy converting one scalar type to another is (numba's ``typeconv.Conversion``)."""

    EXACT = 1
    PROMOTE = 2    # same kind, more range or precision: int32 -> int64, float32 -> float64
    SAFE = 3       # no information lost across kinds: int16 -> float32
    UNSAFE = 4     # may lose information: int64 -> int32, int64 -> float64, float64 -> float32


# (from, to, forward kind, backward kind): numba's casting rules
_RULES = [
    (BOOL, INT8, "safe", "unsafe"), (BOOL, UINT8, "safe", "unsafe"),
    (INT8, INT16, "promote", "unsafe"), (UINT8, UINT16, "promote", "unsafe"),
    (INT16, INT32, "promote", "unsafe"), (UINT16, UINT32, "promote", "unsafe"),
    (INT32, INT64, "promote", "unsafe"), (UINT32, UINT64, "promote", "unsafe"),
    (UINT8, INT16, "safe", "unsafe"), (UINT16, INT32, "safe", "unsafe"), (UINT32, INT64, "safe", "unsafe"),
    (INT8, FLOAT16, "safe", "unsafe"), (INT16, FLOAT32, "safe", "unsafe"), (INT32, FLOAT64, "safe", "unsafe"),
    (INT16, FLOAT16, "unsafe", "unsafe"), (INT32, FLOAT32, "unsafe", "unsafe"),
    (INT64, FLOAT64, "safe", "unsafe"), (UINT64, FLOAT64, "safe", "unsafe"),
    (FLOAT16, FLOAT32, "promote", "unsafe"), (FLOAT32, FLOAT64, "promote", "unsafe"),
    (FLOAT32, COMPLEX64, "safe", "unsafe"), (FLOAT64, COMPLEX128, "safe", "unsafe"),
    (COMPLEX64, COMPLEX128, "promote", "unsafe"),
]
_ALL = SCALARS + COMPLEXES


def _closure() -> dict[tuple[Scalar, Scalar], Conversion]:
    kinds = {"promote": Conversion.PROMOTE, "safe": Conversion.SAFE, "unsafe": Conversion.UNSAFE}
    conv: dict[tuple[Scalar, Scalar], Conversion] = {(t, t): Conversion.EXACT for t in _ALL}
    for a, b, fwd, back in _RULES:
        conv[a, b] = min(conv.get((a, b), Conversion.UNSAFE + 1), kinds[fwd])
        if not b.is_complex or a.is_complex:  # a complex never converts implicitly to a real (numba)
            conv[b, a] = min(conv.get((b, a), Conversion.UNSAFE + 1), kinds[back])
    for k in _ALL:  # a path costs its worst step; keep the best path
        for a in _ALL:
            if (a, k) not in conv:
                continue
            for b in _ALL:
                if (k, b) in conv and a != b:
                    via = max(conv[a, k], conv[k, b])
                    if via < conv.get((a, b), Conversion.UNSAFE + 1):
                        conv[a, b] = Conversion(via)
    return conv


_CONVERSIONS = _closure()


def can_convert(src: Type, dst: Type) -> Conversion | None:
    """numba's ``can_convert``: how ``src`` converts to ``dst`` implicitly, or None if it cannot."""
    if src == dst:
        return Conversion.EXACT
    if isinstance(src, Scalar) and isinstance(dst, Scalar):
        return _CONVERSIONS.get((src, dst))
    return None


@dataclass(frozen=True)
class Signature:
    """A resolved signature: the argument types a call converts its arguments to, and its result type."""

    args: tuple[Type, ...]
    ret: Type


def sig(ret: Type, *args: Type) -> Signature:
    return Signature(tuple(args), ret)


def resolve(cases: list[Signature], args: tuple[Type, ...], *, unsafe: bool = True) -> Signature | None:
    """The best case for ``args`` by numba's rating, or None when none accepts them."""
    best = None
    best_rate = None
    for case in cases:
        if len(case.args) != len(args):
            continue
        rate = [0, 0, 0]  # unsafe, safe, promote
        for actual, formal in zip(args, case.args):
            c = can_convert(actual, formal)
            if c is None or (c == Conversion.UNSAFE and not unsafe):
                break
            if c != Conversion.EXACT:
                rate[Conversion.UNSAFE - c] += 1
        else:
            if best_rate is None or rate < best_rate:
                best, best_rate = case, rate
    return best


# ---------------------------------------------------------------------------------------------- operators

_MACHINE_INTS = (INT64, UINT64)
_REALS = (FLOAT32, FLOAT64)


def _result_int(*types: Scalar) -> Scalar:
    """numba's ``choose_result_int``: at least 64 bits, signed if any input is."""
    bits = max(64, *(t.bits for t in types))
    signed = any(t.kind == "i" for t in types)
    return Scalar(f"{'' if signed else 'u'}int{bits}")


_INT_BINOP = [sig(_result_int(a, b), a, b) for a, b in itertools.product(_MACHINE_INTS, _MACHINE_INTS)]
_ARITH = _INT_BINOP + [sig(t, t, t) for t in _REALS]
_COMPLEX = [sig(t, t, t) for t in COMPLEXES]  # numba's complex +, -, *, /, ** (no //, %, ordering)
_TRUEDIV = [sig(FLOAT64, a, b) for a, b in itertools.product(_MACHINE_INTS, _MACHINE_INTS)] + \
    [sig(t, t, t) for t in _REALS] + _COMPLEX
_POW = _INT_BINOP + [sig(FLOAT32, FLOAT32, e) for e in (INT32, INT64, UINT64)] + \
    [sig(FLOAT64, FLOAT64, e) for e in (INT32, INT64, UINT64)] + [sig(t, t, t) for t in _REALS] + _COMPLEX
_SHIFT = [sig(INT64, t, e) for t in SIGNED for e in (UINT64, INT64)] + \
    [sig(UINT64, t, e) for t in UNSIGNED for e in (UINT64, INT64)]
_BITWISE = [sig(BOOL, BOOL, BOOL)] + _INT_BINOP
_CMP = [sig(BOOL, BOOL, BOOL)] + [sig(BOOL, t, t) for t in SIGNED + UNSIGNED + _REALS]

#: binary operators: (cases, whether unsafe conversions are allowed)
BINARY: dict[str, tuple[list[Signature], bool]] = {
    "add": (_ARITH + _COMPLEX, True), "sub": (_ARITH + _COMPLEX, True), "mul": (_ARITH + _COMPLEX, True),
    "mod": (_ARITH, True),
    "floordiv": (_ARITH, True), "truediv": (_TRUEDIV, True), "pow": (_POW, True),
    "lshift": (_SHIFT, False), "rshift": (_SHIFT, False),
    "and": (_BITWISE, False), "or": (_BITWISE, False), "xor": (_BITWISE, False),
}
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
#: operators numba-cuda also types natively on float16 (``cuda_fp16``), when every operand converts to
#: float16 without loss
_FP16_BINARY = {"add", "sub", "mul", "truediv", *COMPARE}
_FP16_UNARY = {"neg", "pos"}

_UNARY_NUM = [sig(_result_int(t), t) for t in UNSIGNED + SIGNED] + [sig(t, t) for t in _REALS] + \
    [sig(INT64, BOOL)] + [sig(t, t) for t in COMPLEXES]
UNARY: dict[str, tuple[list[Signature], bool]] = {
    "neg": (_UNARY_NUM, True), "pos": (_UNARY_NUM, True),
    "invert": ([sig(BOOL, BOOL)] + [sig(_result_int(t), t) for t in UNSIGNED + SIGNED], False),
    "not": ([sig(BOOL, t) for t in (BOOL, *SIGNED, *UNSIGNED, *_REALS)], True),
}


def _fp16(args: tuple[Type, ...], ret: Type | None) -> Signature | None:
    if any(a == FLOAT16 for a in args) and all(
            (c := can_convert(a, FLOAT16)) is not None and c <= Conversion.SAFE for a in args):
        return Signature(tuple(FLOAT16 for _ in args), FLOAT16 if ret is None else ret)
    return None


def binary(op: str, a: Type, b: Type) -> Signature | None:
    """The signature numba-cuda gives ``a <op> b`` (op: "add", "lt", ...), or None if it has none."""
    if op in _FP16_BINARY and (s := _fp16((a, b), BOOL if op in COMPARE else None)) is not None:
        return s
    if op in COMPARE:
        if op in ("eq", "ne") and any(isinstance(t, Scalar) and t.is_complex for t in (a, b)):
            s = resolve(_COMPLEX, (a, b))
            return None if s is None else Signature(s.args, BOOL)
        return resolve(_CMP, (a, b))
    cases, unsafe = BINARY[op]
    return resolve(cases, (a, b), unsafe=unsafe)


def unary(op: str, a: Type) -> Signature | None:
    """The signature of ``-a`` ("neg"), ``+a`` ("pos"), ``~a`` ("invert"), ``not a`` ("not")."""
    if op in _FP16_UNARY and (s := _fp16((a,), None)) is not None:
        return s
    cases, unsafe = UNARY[op]
    return resolve(cases, (a,), unsafe=unsafe)


def unify(a: Type, b: Type) -> Type | None:
    """The one type two values merge into (at the end of an ``if``, in a loop, ``x if c else y``, ``min``):
    numba unifies numbers by NumPy's promotion, tuples item by item, arrays of one dtype, rank and memory
    space to the loosest layout. None when they cannot merge."""
    if a == b:
        return a
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        if a.is_bool or b.is_bool:  # numba: the bool converts safely to the number
            return b if a.is_bool else a
        return Scalar(np.promote_types(a.dtype, b.dtype).name)
    if isinstance(a, Optional) or isinstance(b, Optional):  # numba: Optional(T) with T or Optional(U)
        u = unify(a.value_type if isinstance(a, Optional) else a, b.value_type if isinstance(b, Optional) else b)
        return optional(u) if isinstance(u, Scalar) else None
    if isinstance(a, Tuple) and isinstance(b, Tuple) and len(a.items) == len(b.items):
        items = [unify(x, y) for x, y in zip(a.items, b.items)]
        return None if any(t is None for t in items) else Tuple(tuple(items))
    if isinstance(a, Array) and isinstance(b, Array) and (a.dtype, a.ndim, a.space) == (b.dtype, b.ndim, b.space):
        return Array(a.dtype, a.ndim, "A", a.space)
    return None


# ---------------------------------------------------------------------------------------------- builtins


def _abs_cases() -> list[Signature]:
    return [sig(t, t) for t in SIGNED + UNSIGNED + _REALS] + [sig(FLOAT32, COMPLEX64), sig(FLOAT64, COMPLEX128)]


BUILTIN_CASES: dict[str, list[Signature]] = {
    "abs": _abs_cases(),
    "round": [sig(INT64, FLOAT32), sig(INT64, FLOAT64), sig(FLOAT32, FLOAT32, INT64), sig(FLOAT64, FLOAT64, INT64)],
    "divmod": [sig(Tuple((t, t)), t, t) for t in _MACHINE_INTS + _REALS],
    "range": [sig(t, *([t] * n)) for t in (INT32, INT64, UINT64) for n in (1, 2, 3)],
}


def builtin(name: str, args: tuple[Type, ...]) -> Signature | None:
    """``abs``, ``round``, ``divmod``, ``range`` (the loop variable's type), ``int``, ``float``, ``bool``,
    ``min``, ``max``."""
    if name == "abs" and args == (FLOAT16,):
        return sig(FLOAT16, FLOAT16)
    if name in BUILTIN_CASES:
        return resolve(BUILTIN_CASES[name], args)
    if len(args) != 1 and name in ("int", "float", "bool"):
        return None
    if name == "int":
        a = args[0]
        if isinstance(a, Scalar):
            return sig(a if a.is_int else INT64, a)
        return None
    if name == "float":
        a = args[0]
        if isinstance(a, Scalar) and not a.is_bool:
            return sig(a if a.is_float else FLOAT64, a)
        return None
    if name == "bool":
        return sig(BOOL, args[0]) if isinstance(args[0], Scalar) else None
    if name == "complex":  # complex(x) and complex(re, im): complex128 (numba's complex() builtin)
        if len(args) in (1, 2) and all(isinstance(a, Scalar) and (len(args) == 1 or not a.is_complex)
                                       for a in args):
            return Signature(args, COMPLEX128)
        return None
    if name in ("min", "max"):
        if len(args) < 2 or not all(isinstance(a, Scalar) for a in args):
            return None
        ret: Type = args[0]
        for a in args[1:]:
            ret = unify(ret, a)
        return Signature(args, ret)
    raise KeyError(name)


# ---------------------------------------------------------------------------------------------- math

_MATH_UNARY = [sig(FLOAT64, INT64), sig(FLOAT64, UINT64), sig(FLOAT32, FLOAT32), sig(FLOAT64, FLOAT64)]
_MATH_UNARY_FP16 = _MATH_UNARY + [sig(FLOAT16, FLOAT16)]
_MATH_BINARY_INT = [sig(FLOAT64, INT64, INT64), sig(FLOAT64, UINT64, UINT64), sig(FLOAT32, FLOAT32, FLOAT32),
                    sig(FLOAT64, FLOAT64, FLOAT64)]
_MATH_BINARY = [sig(FLOAT32, FLOAT32, FLOAT32), sig(FLOAT64, FLOAT64, FLOAT64)]
_MATH_PRED = [sig(BOOL, INT64), sig(BOOL, UINT64), sig(BOOL, FLOAT32), sig(BOOL, FLOAT64)]

#: math functions numba-cuda compiles, with their cases (``cudamath.py``)
MATH: dict[str, list[Signature]] = {
    **{f: _MATH_UNARY for f in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "degrees", "erf",
                                "erfc", "expm1", "gamma", "lgamma", "log1p", "radians", "sinh", "tanh", "tan")},
    **{f: _MATH_UNARY_FP16 for f in ("sin", "cos", "ceil", "floor", "sqrt", "log", "log2", "log10", "exp",
                                     "fabs", "trunc", "exp2")},
    "atan2": _MATH_BINARY_INT, "hypot": _MATH_BINARY_INT,
    "copysign": _MATH_BINARY, "fmod": _MATH_BINARY, "nextafter": _MATH_BINARY, "remainder": _MATH_BINARY,
    "pow": [sig(FLOAT32, FLOAT32, FLOAT32), sig(FLOAT64, FLOAT64, FLOAT64), sig(FLOAT32, FLOAT32, INT32),
            sig(FLOAT64, FLOAT64, INT32)],
    "frexp": [sig(Tuple((FLOAT32, INT32)), FLOAT32), sig(Tuple((FLOAT64, INT32)), FLOAT64)],
    "ldexp": [sig(FLOAT32, FLOAT32, INT32), sig(FLOAT64, FLOAT64, INT32)],
    **{f: _MATH_PRED for f in ("isinf", "isnan", "isfinite")},
    "modf": [sig(Tuple((FLOAT64, FLOAT64)), FLOAT64), sig(Tuple((FLOAT32, FLOAT32)), FLOAT32)],
}


def math_call(name: str, args: tuple[Type, ...]) -> Signature | None:
    return resolve(MATH[name], args)


_CMATH_UNARY = [sig(t, t) for t in COMPLEXES]
_CMATH_PRED = [sig(BOOL, t) for t in COMPLEXES]
#: cmath functions numba-cuda compiles (numba's ``cmathimpl``: complex in, complex out, reals converted)
CMATH: dict[str, list[Signature]] = {
    **{f: _CMATH_UNARY for f in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "log",
                                 "log10", "sin", "sinh", "sqrt", "tan", "tanh")},
    **{f: _CMATH_PRED for f in ("isnan", "isinf", "isfinite")},
    "phase": [sig(FLOAT32, COMPLEX64), sig(FLOAT64, COMPLEX128)],
    "polar": [sig(Tuple((FLOAT32, FLOAT32)), COMPLEX64), sig(Tuple((FLOAT64, FLOAT64)), COMPLEX128)],
    "rect": [sig(COMPLEX128, FLOAT64, FLOAT64)],
}


def cmath_call(name: str, args: tuple[Type, ...]) -> Signature | None:
    if name == "log" and len(args) == 2:  # log(z, base)
        return resolve([sig(t, t, t) for t in COMPLEXES], args)
    return resolve(CMATH[name], args) if name in CMATH else None


# ---------------------------------------------------------------------------------------------- cuda

_BIT_KEEP = [sig(t, t) for t in SIGNED + UNSIGNED]
CUDA_CASES: dict[str, list[Signature]] = {
    "popc": _BIT_KEEP, "clz": _BIT_KEEP,
    "ffs": [sig(UINT32, t) for t in SIGNED + UNSIGNED],
    "brev": [sig(UINT32, UINT32), sig(UINT64, UINT64)],
    "fma": [sig(FLOAT32, FLOAT32, FLOAT32, FLOAT32), sig(FLOAT64, FLOAT64, FLOAT64, FLOAT64)],
    "cbrt": [sig(FLOAT32, FLOAT32), sig(FLOAT64, FLOAT64)],
}
#: element types of the arrays each atomic accepts (``cudadecl.py``)
_ATOMIC_ALL = (FLOAT64, FLOAT32, INT32, UINT32, INT64, UINT64)
_ATOMIC_INT = (INT32, UINT32, INT64, UINT64)
ATOMIC_DTYPES: dict[str, tuple[Scalar, ...]] = {
    "add": _ATOMIC_ALL, "sub": _ATOMIC_ALL, "max": _ATOMIC_ALL, "min": _ATOMIC_ALL, "nanmax": _ATOMIC_ALL,
    "nanmin": _ATOMIC_ALL, "and": _ATOMIC_INT, "or": _ATOMIC_INT, "xor": _ATOMIC_INT,
    "inc": (UINT32, UINT64), "dec": (UINT32, UINT64), "exch": _ATOMIC_INT, "cas": _ATOMIC_INT,
}
#: what ``shfl_*_sync`` and ``match_*_sync`` move: 32- and 64-bit ints and floats
WARP_VALUE_TYPES = (INT32, INT64, FLOAT32, FLOAT64)
#: ``cuda.selp(test, a, b)``: a and b of one of these types
SELP_TYPES = (FLOAT64, FLOAT32, INT16, UINT16, INT32, UINT32, INT64, UINT64)


def cuda_call(name: str, args: tuple[Type, ...]) -> Signature | None:
    return resolve(CUDA_CASES[name], args)
