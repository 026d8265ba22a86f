"""The libdevice functions the lanes back end calls by name: IR intrinsic ``libdevice.<name>`` is
``FUNCTIONS[name](*operands)``, the operands already of the types numba-cuda declares
(``gpusim.frontend.libdevice``), on lane vectors or NumPy scalars; a tuple result is a Python tuple.

``FLOPS[name]`` is the kind of floating-point operation the function counts as (as Nsight Compute counts
the instruction it compiles to), or absent where it is no floating-point work (conversions, bit functions).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from types import SimpleNamespace

import numpy as np

from .. import intrinsics as ix
from . import bessel as B
from . import conversions as C
from . import fast
from . import functions as M
from . import integers as I
from . import rounding as R

DIRECTED = ("rd", "ru", "rz")
ALL_MODES = ("rn", "rz", "rd", "ru")


def _table() -> tuple[dict[str, Callable], dict[str, str]]:
    t: dict[str, Callable] = {}
    flops: dict[str, str] = {}
    for m in DIRECTED:
        for op, f32, f64 in (("add", R.fadd, R.dadd), ("mul", R.fmul, R.dmul), ("div", R.fdiv, R.ddiv)):
            t[f"f{op}_{m}"], t[f"d{op}_{m}"] = partial(f32, mode=m), partial(f64, mode=m)
            flops[f"f{op}_{m}"] = flops[f"d{op}_{m}"] = op
        t[f"fsub_{m}"], flops[f"fsub_{m}"] = partial(R.fsub, mode=m), "sub"
        t[f"frcp_{m}"], t[f"drcp_{m}"] = partial(R.frcp, mode=m), partial(R.drcp, mode=m)
        flops[f"frcp_{m}"] = flops[f"drcp_{m}"] = "div"
        t[f"fsqrt_{m}"], t[f"dsqrt_{m}"] = partial(R.fsqrt, mode=m), partial(R.dsqrt, mode=m)
        t[f"fmaf_{m}"], t[f"fma_{m}"] = partial(R.fmaf, mode=m), partial(R.fma, mode=m)
        flops[f"fmaf_{m}"] = flops[f"fma_{m}"] = "fma"
    for name, f in (("fmaf_rn", R.fmaf), ("fma_rn", R.fma)):       # exactly one rounding (the IR's Fma
        t[name], flops[name] = partial(f, mode="rn"), "fma"           # can round twice, or off by an ulp)
    t["frsqrt_rn"] = R.frsqrt_rn
    for m in ALL_MODES:
        for src in ("float", "double"):
            for dest in ("int", "uint", "ll", "ull"):
                t[f"{src}2{dest}_{m}"] = partial(C.float_to_int, dest=dest, mode=m)
        for src in ("int", "uint", "ll", "ull"):
            t[f"{src}2float_{m}"] = partial(C.int_to_float, source=src, dest="float", mode=m)
        for src in ("ll", "ull"):
            t[f"{src}2double_{m}"] = partial(C.int_to_float, source=src, dest="double", mode=m)
        t[f"double2float_{m}"] = partial(C.double_to_float, mode=m)
    for src in ("int", "uint"):
        t[f"{src}2double_rn"] = partial(C.int_to_float, source=src, dest="double", mode="rn")
    t.update(float_as_int=partial(C.bits_as, t=np.int32), int_as_float=partial(C.bits_as, t=np.float32),
             double_as_longlong=partial(C.bits_as, t=np.int64),
             longlong_as_double=partial(C.bits_as, t=np.float64), double2hiint=C.double2hiint,
             double2loint=C.double2loint, hiloint2double=C.hiloint2double, float2half_rn=C.float2half_rn,
             half2float=C.half2float)
    for name, unsigned, up in (("hadd", False, False), ("rhadd", False, True), ("uhadd", True, False),
                               ("urhadd", True, True)):
        t[name] = partial(I.halving_add, unsigned=unsigned, round_up=up)
    for prefix, unsigned in (("", False), ("u", True)):
        t[prefix + "mulhi"] = partial(I.mulhi, unsigned=unsigned)
        t[prefix + "mul64hi"] = partial(I.mul64hi, unsigned=unsigned)
        t[prefix + "mul24"] = partial(I.mul24, unsigned=unsigned)
        t[prefix + "sad"] = partial(I.sad, unsigned=unsigned)
    t["byte_perm"] = I.byte_perm
    for name in ("umax", "umin", "ullmax", "ullmin"):
        t[name] = partial(I.unsigned_extreme, which=name[-3:])
    unary = {"cospi": M.cospi, "sinpi": M.sinpi, "erfcinv": M.erfcinv, "erfcx": M.erfcx, "erfinv": M.erfinv,
             "exp10": M.exp10, "normcdf": M.normcdf, "normcdfinv": M.normcdfinv, "rcbrt": M.rcbrt,
             "rsqrt": M.rsqrt, "nearbyint": _rint, "rint": _rint, "round": M.round_half_away, "logb": M.logb,
             "ilogb": M.ilogb, "sincos": M.sincos, "sincospi": M.sincospi, "frexp": _frexp, "modf": _modf,
             "llrint": partial(_to_ll, mode="rn"), "llround": _llround}
    for name, f in unary.items():
        t[name] = t[name + "f"] = f
    for name, f in (("fdim", M.fdim), ("powi", M.powi), ("scalbn", _scalbn), ("remquo", M.remquo)):
        t[name] = t[name + "f"] = f
    for name in ("j0", "j1", "y0", "y1", "jn", "yn"):
        t[name] = t[name + "f"] = getattr(B, name)
    t["signbitd"] = t["signbitf"] = M.signbit
    t["saturatef"] = M.saturate
    for name in ("expf", "exp10f", "logf", "log2f", "log10f", "sinf", "cosf", "tanf", "sincosf", "powf",
                 "fdividef"):
        t["fast_" + name] = getattr(fast, "fast_" + name)
    for name in t:
        if name not in flops and not any(name.startswith(p) for p in _NOT_FLOPS):
            flops[name] = "special"
    return t, flops


_NOT_FLOPS = ("float2", "double2", "int2", "uint2", "ll2", "ull2", "float_as", "int_as", "double_as",
              "longlong_as", "hiloint", "half2", "hadd", "rhadd", "uhadd", "urhadd", "mulhi", "umulhi", "mul64hi",
              "umul64hi", "mul24", "umul24", "sad", "usad", "byte_perm", "umax", "umin", "ullmax", "ullmin",
              "signbit", "ilogb", "logb", "frexp", "modf", "rint", "nearbyint", "round", "llrint", "llround",
              "fdim", "scalbn", "saturatef")


def _rint(x):
    (x,), sc = R.lanes(x)
    return R.done(np.rint(x), sc)


def _frexp(x):
    return ix.frexp(x, np.asarray(x).dtype)


def _modf(x):
    return ix.modf(x, np.asarray(x).dtype)


def _scalbn(x, n):
    return ix.ldexp(x, n, np.asarray(x).dtype)


def _to_ll(x, mode):
    return C.float_to_int(x, dest="ll", mode=mode)


def _llround(x):
    return C.float_to_int(M.round_half_away(x), dest="ll", mode="rz")


FUNCTIONS, FLOPS = _table()
#: the namespace generated code calls: ``ld.<name>(...)``
NAMESPACE = SimpleNamespace(**FUNCTIONS)
