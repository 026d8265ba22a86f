"""Conversions between scalar types, as a kernel performs them: the one definition that constant folding in
the front end and every back end's run time share, so a folded constant has the bits the GPU computes.

* int -> int: the low bits, two's complement (``int64(2**31) -> int32`` is -2**31);
* float -> int: toward zero, clamped to the target's range (PTX ``cvt.rzi`` saturates). NaN gives 0 from a
  float32 (or float16) to an integer of at most 32 bits, and the target's top bit alone (``0x80000000``,
  ``0x8000000000000000``, signed or not) from a float64 or to a 64-bit integer: what the H200 returns for
  ``np.int32(x)``, ``np.uint64(x)``, ``int(x)`` (docs/gpu-semantics.md); 0 for 8- and 16-bit targets;
* number -> bool: ``x != 0`` (NaN is true); bool -> number: 0 or 1;
* float -> float, int -> float: rounded to nearest even (NumPy's conversion).
"""

from __future__ import annotations

import numpy as np


def _limits(dst: np.dtype) -> tuple[float, float]:
    info = np.iinfo(dst)
    return float(info.min), float(info.max)


def nan_to_int(src: np.dtype, dst: np.dtype):
    """What a NaN of type ``src`` converts to in the integer type ``dst`` (8- and 16-bit targets, not
    measured on the GPU, keep 0)."""
    if dst.itemsize < 4 or (src.itemsize <= 4 and dst.itemsize == 4):
        return dst.type(0)
    return np.array(1 << (8 * dst.itemsize - 1), np.uint64).astype(dst).item() if dst.kind == "u" else \
        dst.type(np.iinfo(dst).min)


def convert(x, dst: np.dtype):
    """Convert a NumPy scalar or array ``x`` to ``dst`` by the rules above (arrays stay arrays)."""
    dst = np.dtype(dst)
    src = np.asarray(x).dtype
    if dst.kind == "b":
        return x != 0 if src.kind != "b" else x
    if dst.kind in "iu" and src.kind == "f":
        lo, hi = _limits(dst)
        if isinstance(x, np.ndarray):
            t = np.trunc(x)
            nan = np.isnan(t)
            t = np.where(nan, 0.0, t)
            big = t >= hi  # float(hi) may round up past the range: clamp in the integer type
            small = t <= lo
            out = np.clip(t, lo, hi).astype(dst)
            if big.any():
                out[big] = dst.type(np.iinfo(dst).max)
            if small.any():
                out[small] = dst.type(np.iinfo(dst).min)
            if nan.any():
                out[nan] = nan_to_int(src, dst)
            return out
        v = float(x)
        if v != v:
            return dst.type(nan_to_int(src, dst))
        if v >= hi:
            return dst.type(np.iinfo(dst).max)
        if v <= lo:
            return dst.type(np.iinfo(dst).min)
        return dst.type(int(v))
    if dst.kind in "iu" and src.kind in "iub":
        if isinstance(x, np.ndarray):
            return x.astype(dst)
        bits = dst.itemsize * 8
        v = int(x) & ((1 << bits) - 1)
        if dst.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
        return dst.type(v)
    if isinstance(x, np.ndarray):
        return x.astype(dst)
    return dst.type(x)


def python_value(x) -> bool | int | float:
    """A NumPy scalar as the Python value a ``Const`` holds."""
    return x.item() if isinstance(x, np.generic) else x
