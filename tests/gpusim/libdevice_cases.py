"""Every libdevice function numba-cuda declares, as one small kernel each, and fixed inputs for it: shared by
tests/gpusim/test_libdevice_*.py and benchmarks/gpu/libdevice_check.py (which runs them on the GPU too).

``SIGNATURES`` comes from numba-cuda's own table (``numba/cuda/libdevicefuncs.py``): name -> (parameter
dtypes, result dtypes; several for a tuple). ``kernels(names)`` writes the kernels to a module file and
imports it (``k_<name>(o0, [o1,] a0, a1, ...)``: ``o*[i]`` = the result for ``a*[i]``). ``inputs(name)``
gives the arguments: special values of each type (zeros, subnormals, the largest values, infinities, NaN,
halves and integers at conversion limits), every pair of them for two-operand functions, then random values
over all exponents.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import tempfile
from pathlib import Path

import numpy as np
from numba.cuda import libdevicefuncs
from numba.cuda.types import BaseTuple

N = 1024
#: ulps past which an input counts as far off, in the GPU comparison's recorded bounds
FAR = 2

#: functions whose results are specified bit for bit (IEEE rounding, PTX conversions, integer arithmetic)
EXACT = re.compile(r"^([fd](add|sub|mul|div|rcp|sqrt)_r[dunz]|fmaf?(_r[dunz])?|frsqrt_rn|.*2.*_r[dunz]|"
                   r"(float_as_int|int_as_float|double_as_longlong|longlong_as_double|double2hiint|"
                   r"double2loint|hiloint2double|half2float)|u?r?hadd|u?mulhi|u?mul64hi|u?mul24|u?sad|"
                   r"byte_perm|u?(ll)?(max|min)|ll(abs)?|abs|brev(ll)?|popc(ll)?|clz(ll)?|ffs(ll)?|"
                   r"(nearbyint|rint|round|trunc|floor|ceil|fabs|copysign|fdim|fmax|fmin|ldexp|scalbn|"
                   r"frexp|modf|logb|ilogb|llrint|llround|signbit|saturate|isnan|isinf|finite|isfinite)[fd]?)$")


def _signatures() -> dict[str, tuple[tuple[np.dtype, ...], tuple[np.dtype, ...]]]:
    out = {}
    for fname, (retty, args) in libdevicefuncs.functions.items():
        sig = libdevicefuncs.create_signature(retty, args)
        ret = sig.return_type
        rets = tuple(ret.types) if isinstance(ret, BaseTuple) else (ret,)
        out[fname[5:]] = (tuple(np.dtype(str(t)) for t in sig.args), tuple(np.dtype(str(t)) for t in rets))
    return out


SIGNATURES = _signatures()


def kernel_source(names) -> str:
    lines = ["from numba import cuda", "from numba.cuda import libdevice", ""]
    for name in names:
        params, rets = SIGNATURES[name]
        outs = [f"o{k}" for k in range(len(rets))]
        ins = [f"a{k}" for k in range(len(params))]
        call = f"libdevice.{name}({', '.join(a + '[i]' for a in ins)})"
        lines += ["", "@cuda.jit", f"def k_{name}({', '.join(outs + ins)}):", "    i = cuda.grid(1)",
                  "    if i < o0.size:"]
        if len(rets) == 1:
            lines.append(f"        o0[i] = {call}")
        else:
            lines.append(f"        {', '.join('r' + o for o in outs)} = {call}")
            lines += [f"        {o}[i] = r{o}" for o in outs]
        lines.append("")
    return "\n".join(lines)


def kernels(names, directory: str | Path | None = None):
    """The kernels of ``names`` in a module written to ``directory`` (a new temporary one by default)."""
    names = list(names)
    d = Path(directory or tempfile.mkdtemp(prefix="libdevice_kernels_"))
    path = d / "libdevice_all_kernels.py"
    path.write_text(kernel_source(names))
    spec = importlib.util.spec_from_file_location("libdevice_all_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {name: getattr(mod, f"k_{name}") for name in names}


# ---------------------------------------------------------------------------------------------- inputs


def _float_specials(t) -> list:
    fi = np.finfo(t)
    tiny = fi.smallest_subnormal
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 3.0, float(tiny), -float(tiny), float(fi.tiny),
            float(fi.max), -float(fi.max), np.inf, -np.inf, np.nan, 1 + float(fi.eps), 1 - float(fi.epsneg),
            0.1, 2.0 ** 31, -(2.0 ** 31) - 1, 2.0 ** 32, 2.0 ** 63, 2.0 ** 64, 1e-3, 0.75, -0.999]
    return [t(v) for v in vals]


def _int_specials(t) -> list:
    ii = np.iinfo(t)
    return [t(v) for v in (0, 1, -1, 2, 7, -7, 255, 0x1234, ii.max, ii.min, ii.max - 1, ii.min + 1, 1 << 20,
                           -(1 << 20), 0x3210, 0x7654)]


def _random(t, n: int, rng) -> np.ndarray:
    if t.kind == "f":
        bits = np.dtype(f"u{t.itemsize}")
        raw = rng.integers(0, np.iinfo(bits).max, n, dtype=bits, endpoint=True).view(t)
        normal = rng.standard_normal(n).astype(t) * t.type(10.0) ** rng.integers(-3, 4, n).astype(t)
        return np.where(rng.random(n) < 0.5, raw, normal).astype(t)
    ii = np.iinfo(t)
    wide = rng.integers(ii.min, ii.max, n, dtype=t, endpoint=True)
    small = rng.integers(-1000, 1000, n).astype(t)
    return np.where(rng.random(n) < 0.7, wide, small).astype(t)


def _exponents(n: int, rng) -> np.ndarray:
    return rng.integers(-70, 70, n).astype(np.int32)


def inputs(name: str, n: int = N, seed: int = 0) -> list[np.ndarray]:
    """The arguments for ``name``: each a length-``n`` array of its parameter's dtype."""
    params, _ = SIGNATURES[name]
    rng = np.random.default_rng(seed + sum(map(ord, name)))
    floats = [p for p in params if p.kind == "f"]
    out = []
    for k, p in enumerate(params):
        if p.kind == "i" and floats:                       # an exponent, an order or a count: small
            out.append(_exponents(n, rng))
            continue
        if p == np.int16:                                   # float16 bits
            specials = [np.int16(v) for v in (0, 0x3C00, -0x4400, 0x7C00, -0x400, 0x7E00, 1, 0x3FF, 0x7BFF)]
        else:
            specials = _float_specials(p.type) if p.kind == "f" else _int_specials(p.type)
        s = np.array(specials, p)
        m = len(s)
        if len(params) == 1:
            head = s
        elif len(params) == 2:                             # every pair of specials
            head = np.repeat(s, m) if k == 0 else np.tile(s, m)
        else:
            head = s[rng.integers(0, m, 4 * m)]
        a = _random(p, n, rng)
        a[:len(head)] = head[:n]
        out.append(a)
    if len(params) >= 2 and all(p.kind == "f" for p in params[:2]):   # near cancellations and ties
        a, b = out[0], out[1]
        lo, hi = n // 2, n // 2 + n // 8
        with np.errstate(all="ignore"):
            b[lo:hi] = -a[lo:hi] * (1 + np.finfo(a.dtype).eps * rng.integers(-4, 5, hi - lo).astype(a.dtype))
            b[hi:hi + n // 16] = a[hi:hi + n // 16] * np.finfo(a.dtype).eps / 2
    return out


def input_digest(args: list[np.ndarray]) -> str:
    """A short digest of a function's arguments (their bytes): recorded beside the GPU's results, so that a
    change to ``inputs`` cannot pass unnoticed against results computed from the old ones."""
    h = hashlib.sha256()
    for a in args:
        h.update(str(a.dtype).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def outputs(name: str, n: int = N) -> list[np.ndarray]:
    _, rets = SIGNATURES[name]
    return [np.zeros(n, r) for r in rets]


# ------------------------------------------------------------------------------------------- comparing


def ordered(a: np.ndarray) -> np.ndarray:
    """Floats as integers in the floats' order (ulp distance = difference), as int64."""
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    i = a.view(it).astype(np.int64)
    top = np.int64(np.iinfo(it).max)
    return np.where(i < 0, -(i & top), i)


def distance(want: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Per input, how far ``got`` is from ``want``: 0 for the same bits (any NaN equals any NaN); for floats
    the distance in ulps (+0 and -0 are 1 apart); ``-1`` where one is NaN and the other is not, or where
    integers differ at all."""
    if want.dtype.kind != "f":
        return np.where(want == got, 0, -1)
    same = (np.isnan(want) & np.isnan(got)) | (want.view(f"u{want.itemsize}") == got.view(f"u{got.itemsize}"))
    with np.errstate(all="ignore"):
        d = np.abs(ordered(want) - ordered(got))
    d = np.where(d == 0, 1, d)                                  # only +0/-0 differ with equal ordering
    d = np.where(same, 0, d)
    return np.where(np.isnan(want) != np.isnan(got), -1, d)
