"""``cuda.libdevice.<name>(...)``: every libdevice function numba-cuda declares, typed by its declaration and
lowered to an IR node gpusim already has or to the IR intrinsic ``libdevice.<name>``.

numba-cuda declares every libdevice function with exactly one signature (``numba/cuda/libdevicefuncs.py``):
a name ending in ``f`` takes and gives float32, the plain name float64, and arguments convert to it as for
any call (``fadd_rn(a[i], 10.0)`` narrows the literal to float32). Arguments are positional only.

What each becomes:

* the C math functions (``expf``, ``exp``, ``atan2f``, ``tgamma``, ...): the ``math.*`` intrinsic of that
  name in the declared type. numba lowers ``math.exp`` of a float32 to this same ``__nv_expf``.
* ``fmax``/``fmin``: C's, which return the other operand when one is NaN (IR ``max``/``min`` propagate NaN),
  and order -0 below +0, as the H200 does: ``fmax(-0.0, 0.0)`` and ``fmax(0.0, -0.0)`` are +0, ``fmin`` of
  them -0.
* arithmetic rounded to nearest (``fadd_rn``, ``fmul_rn``, ``ddiv_rn``, ``frcp_rn``, ``fsqrt_rn``, ...):
  the plain operation, which rounds to nearest already, but never contracted into a fused multiply-add:
  libdevice writes them as ``add.rn``/``mul.rn`` instructions, which the compiler leaves apart. Operands and
  result pass through temporaries, which the FMA pass (``gpusim.ir.fma``) does not look through.
* ``fma``/``fmaf`` (and their ``_rn``): the runtime's fused multiply-add, rounded exactly once (the IR's
  ``Fma`` is faster but not always exact: float32 rounds through float64, which can round twice, and
  float64 can be an ulp off).
* ``isnanf``, ``isinfd``, ``finitef``, ...: int32 0 or 1.
* the integer bit functions (``popc``, ``popcll``, ``clz``, ``ffs``, ``brev``, ``abs``, ``min``, ...) on
  int32 (``ll``: int64).
* everything else (directed rounding ``_rd``/``_ru``/``_rz``, conversions, ``fast_*``, the integer
  functions, ``sinpi``, ``erfinv``, Bessel functions, ...): IR intrinsic ``libdevice.<name>``, computed by
  ``gpusim.runtime.libdevice`` as the GPU computes it (docs/gpu-semantics.md, "cuda.libdevice").

A name numba-cuda does not declare is a compile error; ``REFUSED`` would name functions gpusim declines.
"""

from __future__ import annotations

import ast
from typing import Any

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import BOOL, FLOAT32, FLOAT64, INT16, INT32, INT64, UINT32, UINT64, Scalar, Tuple, Type
from . import typing as ty

_MATH1 = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "cos", "cosh", "erf", "erfc", "exp",
          "exp2", "expm1", "fabs", "floor", "lgamma", "log", "log10", "log1p", "log2", "sin", "sinh", "sqrt",
          "tan", "tanh", "trunc")
_MATH2 = ("atan2", "copysign", "fmod", "hypot", "nextafter", "pow", "remainder")


def _table() -> dict[str, tuple[str, tuple[Scalar, ...], Type]]:
    """name -> (what it lowers to, parameter types, result type)."""
    t: dict[str, tuple[str, tuple[Scalar, ...], Type]] = {}
    for suffix, f in (("", FLOAT64), ("f", FLOAT32)):
        for name in _MATH1:
            t[name + suffix] = (f"math.{name}", (f,), f)
        t["tgamma" + suffix] = ("math.gamma", (f,), f)
        for name in _MATH2:
            t[name + suffix] = (f"math.{name}", (f, f), f)
        t["ldexp" + suffix] = ("math.ldexp", (f, INT32), f)
        t["fmax" + suffix] = ("fmax", (f, f), f)
        t["fmin" + suffix] = ("fmin", (f, f), f)
        name = "fma" + suffix                          # exactly one rounding (gpusim.runtime.libdevice)
        t[name] = t[name + "_rn"] = (f"libdevice.{name}_rn", (f, f, f), f)
    for prefix, f in (("f", FLOAT32), ("d", FLOAT64)):
        for op in ("add", "sub", "mul", "div"):
            t[f"{prefix}{op}_rn"] = (op if op != "div" else "truediv", (f, f), f)
        t[f"{prefix}rcp_rn"] = ("rcp", (f,), f)
        t[f"{prefix}sqrt_rn"] = ("math.sqrt", (f,), f)
    del t["dsub_rn"]                                   # libdevice has no __nv_dsub_rn
    for name, f, suffix in (("isnan", FLOAT32, "f"), ("isnan", FLOAT64, "d"), ("isinf", FLOAT32, "f"),
                            ("isinf", FLOAT64, "d"), ("isfinite", FLOAT64, "d")):
        t[name + suffix] = (f"math.{name}", (f,), INT32)
    t["finitef"] = ("math.isfinite", (FLOAT32,), INT32)
    for suffix, i in (("", INT32), ("ll", INT64)):
        t["popc" + suffix] = ("popc", (i,), INT32)
        t["clz" + suffix] = ("clz", (i,), INT32)
        t["ffs" + suffix] = ("ffs", (i,), INT32)
        t["brev" + suffix] = ("brev", (i,), i)
    t["abs"], t["llabs"] = ("abs", (INT32,), INT32), ("abs", (INT64,), INT64)
    for name, i in (("min", INT32), ("max", INT32), ("llmin", INT64), ("llmax", INT64)):
        t[name] = (name[-3:], (i, i), i)
    for name, (params, ret) in _computed().items():
        t[name] = (f"libdevice.{name}", params, ret)
    return t


def _computed() -> dict[str, tuple[tuple[Scalar, ...], Type]]:
    """Functions computed by ``gpusim.runtime.libdevice``: name -> (parameter types, result type), numba-cuda's."""
    t: dict[str, tuple[tuple[Scalar, ...], Type]] = {}
    f32, f64 = FLOAT32, FLOAT64
    for m in ("rd", "ru", "rz"):
        for op in ("add", "sub", "mul", "div"):
            t[f"f{op}_{m}"] = ((f32, f32), f32)
            if op != "sub":                                # libdevice has no __nv_dsub_r*
                t[f"d{op}_{m}"] = ((f64, f64), f64)
        for op in ("rcp", "sqrt"):
            t[f"f{op}_{m}"], t[f"d{op}_{m}"] = ((f32,), f32), ((f64,), f64)
        t[f"fmaf_{m}"], t[f"fma_{m}"] = ((f32, f32, f32), f32), ((f64, f64, f64), f64)
    t["frsqrt_rn"] = ((f32,), f32)
    ints = {"int": INT32, "uint": INT32, "ll": INT64, "ull": INT64}    # numba-cuda: unsigned as signed bits
    for m in ("rn", "rz", "rd", "ru"):
        for src, ft in (("float", f32), ("double", f64)):
            for dest, it in ints.items():
                t[f"{src}2{dest}_{m}"] = ((ft,), it)
        for src, it in ints.items():
            t[f"{src}2float_{m}"] = ((it,), f32)
            if it == INT64:
                t[f"{src}2double_{m}"] = ((it,), f64)
        t[f"double2float_{m}"] = ((f64,), f32)
    t["int2double_rn"] = t["uint2double_rn"] = ((INT32,), f64)
    t.update(float_as_int=((f32,), INT32), int_as_float=((INT32,), f32), double_as_longlong=((f64,), INT64),
             longlong_as_double=((INT64,), f64), double2hiint=((f64,), INT32), double2loint=((f64,), INT32),
             hiloint2double=((INT32, INT32), f64), float2half_rn=((f32,), INT16), half2float=((INT16,), f32))
    for name in ("hadd", "rhadd", "uhadd", "urhadd", "mulhi", "umulhi", "mul24", "umul24", "umax", "umin"):
        t[name] = ((INT32, INT32), INT32)
    for name in ("mul64hi", "umul64hi", "ullmax", "ullmin"):
        t[name] = ((INT64, INT64), INT64)
    for name in ("sad", "usad", "byte_perm"):
        t[name] = ((INT32, INT32, INT32), INT32)
    for suffix, f in (("", f64), ("f", f32)):
        for name in ("cospi", "sinpi", "erfcinv", "erfcx", "erfinv", "exp10", "normcdf", "normcdfinv", "rcbrt",
                     "rsqrt", "nearbyint", "rint", "round", "logb"):
            t[name + suffix] = ((f,), f)
        t["fdim" + suffix] = ((f, f), f)
        t["ilogb" + suffix] = ((f,), INT32)
        t["llrint" + suffix] = t["llround" + suffix] = ((f,), INT64)
        t["powi" + suffix] = t["scalbn" + suffix] = ((f, INT32), f)
        for name in ("sincos", "sincospi", "modf"):
            t[name + suffix] = ((f,), Tuple((f, f)))
        t["frexp" + suffix] = ((f,), Tuple((f, INT32)))
        t["remquo" + suffix] = ((f, f), Tuple((f, INT32)))
        for name in ("j0", "j1", "y0", "y1"):
            t[name + suffix] = ((f,), f)
        t["jn" + suffix] = t["yn" + suffix] = ((INT32, f), f)
    t["signbitd"], t["signbitf"], t["saturatef"] = ((f64,), INT32), ((f32,), INT32), ((f32,), f32)
    for name in ("expf", "exp10f", "logf", "log2f", "log10f", "sinf", "cosf", "tanf"):
        t["fast_" + name] = ((f32,), f32)
    t["fast_powf"] = t["fast_fdividef"] = ((f32, f32), f32)
    t["fast_sincosf"] = ((f32,), Tuple((f32, f32)))
    return t


#: functions numba-cuda declares that gpusim refuses, with the reason shown to the user (none today: a
#: function whose results gpusim could not vouch for would be listed here rather than computed wrongly)
REFUSED: dict[str, str] = {}


FUNCTIONS = _table()


def libdevice_call(low: Any, name: str, node: ast.Call) -> N.Expr:
    """``cuda.libdevice.<name>(...)`` lowered by ``low`` (a FunctionLowering)."""
    line = node.lineno
    if name in REFUSED:
        raise low.error(node, f"cuda.libdevice.{name} is not supported by gpusim ({REFUSED[name]})")
    if name not in FUNCTIONS:
        raise low.error(node, f"cuda.libdevice has no function {name}", KernelCompileError)
    what, params, ret = FUNCTIONS[name]
    if node.keywords:
        raise low.error(node, f"cuda.libdevice.{name}() takes no keyword arguments", KernelCompileError)
    args = [low.expr(a) for a in node.args]
    if len(args) != len(params) or ty.resolve([ty.sig(ret, *params)], tuple(a.type for a in args)) is None:
        got = ", ".join(str(a.type) for a in args)
        want = ", ".join(str(p) for p in params)
        raise low.error(node, f"numba-cuda's cuda.libdevice.{name} takes ({want}), not ({got})", KernelCompileError)
    xs = [low.cast(a, p) for a, p in zip(args, params)]
    if what.startswith("libdevice."):
        return N.Intrinsic(what, xs, type=ret, line=line)
    if what.startswith("math."):
        e: N.Expr = N.Intrinsic(what, xs, type=BOOL if ret == INT32 else ret, line=line)
        return low.cast(e, ret)
    if what in ("add", "sub", "mul", "truediv", "rcp"):
        if what == "rcp":
            xs, what = [N.Const(1.0, type=ret, line=line), xs[0]], "truediv"
        return _apart(low, xs, lambda a, b: N.Binary(what, a, b, type=ret, line=line), ret, line)
    if what in ("fmax", "fmin"):
        return _apart(low, xs, lambda a, b: _c_max(what[1:], a, b, ret, line), ret, line)
    if what == "brev":
        unsigned = UINT32 if ret == INT32 else UINT64
        return low.cast(N.Intrinsic("brev", [low.cast(xs[0], unsigned)], type=unsigned, line=line), ret)
    if what == "ffs":
        return low.cast(N.Intrinsic("ffs", xs, type=UINT32, line=line), INT32)
    if what in ("popc", "clz"):
        return low.cast(N.Intrinsic(what, xs, type=xs[0].type, line=line), INT32)
    return N.Intrinsic(what, xs, type=ret, line=line)       # abs, min, max


def _apart(low: Any, xs: list[N.Expr], make: Any, ret: Scalar, line: int) -> N.Expr:
    """``make(*operands)`` with every operand and the result held in temporaries: each evaluated once, and
    nothing the FMA pass could contract with the operation or with what uses its result."""
    names = [low.tmp() for _ in xs]
    result = low.tmp()
    body: N.Expr = N.Let(result, make(*(N.Var(v, type=x.type, line=line) for v, x in zip(names, xs))),
                         N.Var(result, type=ret, line=line), type=ret, line=line)
    for v, x in reversed(list(zip(names, xs))):
        body = N.Let(v, x, body, type=ret, line=line)
    return body


def _c_max(op: str, a: N.Expr, b: N.Expr, t: Scalar, line: int) -> N.Expr:
    """C's fmax/fmin of two temporaries: the other operand where one is NaN; of two equal values (+0 and -0
    among them) the one whose sign is the larger (max) or the smaller (min); else max/min."""
    def isnan(x: N.Expr) -> N.Expr:
        return N.Intrinsic("math.isnan", [x], type=BOOL, line=line)

    one = N.Const(1.0, type=t, line=line)
    negative_a = N.Compare("lt", N.Intrinsic("math.copysign", [one, a], type=t, line=line),
                           N.Const(0.0, type=t, line=line), type=BOOL, line=line)
    first, second = (b, a) if op == "max" else (a, b)
    equal = N.Select(negative_a, first, second, type=t, line=line)
    both = N.Select(N.Compare("eq", a, b, type=BOOL, line=line), equal,
                    N.Intrinsic(op, [a, b], type=t, line=line), type=t, line=line)
    return N.Select(isnan(a), b, N.Select(isnan(b), a, both, type=t, line=line), type=t, line=line)
