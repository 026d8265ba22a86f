"""Math functions over lane vectors, computed by NumPy exactly as the lanes back end computes them (so a
compiled kernel's ``exp`` has NumPy's bits): a small compiled function leaves compiled code for one call over
the chunk's lanes. It is kept out of the kernels themselves: numba's object-mode blocks inside a large
kernel's loops can fail to compile."""

from __future__ import annotations

import numpy as np
from numba import njit, objmode

from ...runtime import intrinsics as ix
from .values import NUMPY_INTRINSICS

NAMES = tuple(sorted(NUMPY_INTRINSICS))
DTYPES = ("float16", "float32", "float64", "int32", "int64")
_FUNCS = {name: eval("lambda a, b, dt: " + code.format("a", "b", dt="dt"), {"np": np, "ix": ix})  # noqa: S307
          for name, code in NUMPY_INTRINSICS.items()}


def apply(fid, n, a, sa, b, sb, o1, o2, dt) -> None:
    x = a[0] if sa else a[:n]
    y = b[0] if sb else b[:n]
    r = _FUNCS[NAMES[fid]](x, y, np.dtype(DTYPES[dt]))
    if isinstance(r, tuple):
        o1[:n] = r[0]
        o2[:n] = r[1]
    else:
        o1[:n] = r


@njit(cache=True)
def math_call(fid, n, a, sa, b, sb, o1, o2, dt):
    with objmode():
        apply(fid, n, a, sa, b, sb, o1, o2, dt)
    return 0
