"""Compiled helpers of the generated kernels: fault records, and the arithmetic that needs care (integer
division and powers, fused multiply-adds, bit counts, NaN-propagating min/max, float powers by squaring),
each the lanes back end's rule (``gpusim.runtime.core``, ``gpusim.runtime.intrinsics``) for one value.

The helpers that replay what accesses and barriers mean for the observers are in ``rt_access.py`` and
``rt_sync.py``; ``external.py`` exposes those to generated code as C entry points. Generated code calls the
ones here directly (they are small, and numba inlines them).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .layout import F_GTID, F_KEY, F_KIND, F_P, I_BBLK, I_BLOG, I_FLOG, S_OOB, S_OOB_DIM, S_OOB_IDX, S_OOB_LANE

OPTS = {"cache": True, "nogil": True, "error_model": "numpy"}
#: lane-accesses kept for the distinct readers/writers counts (``gpusim.observe.counts.MAX_PAIRS``)
MAX_PAIRS = 1 << 22


# ---------------------------------------------------------------------------------------------- faults

@njit(**OPTS)
def record(FLOG, I, FSEEN, FCNT, key, inc, kind, gtid, p0=0, p1=0, p2=0, p3=0, p4=0, p5=0, p6=0, p7=0):
    """Count ``inc`` hits of fault ``key``; log its first hit. True when the key is new."""
    FCNT[key] += inc
    if FSEEN[key]:
        return False
    FSEEN[key] = True
    n = I[I_FLOG]
    row = FLOG[n]
    row[F_KEY] = key
    row[F_KIND] = kind
    row[F_GTID] = gtid
    row[F_P] = p0
    row[F_P + 1] = p1
    row[F_P + 2] = p2
    row[F_P + 3] = p3
    row[F_P + 4] = p4
    row[F_P + 5] = p5
    row[F_P + 6] = p6
    row[F_P + 7] = p7
    I[I_FLOG] = n + 1
    return True


# ---------------------------------------------------------------------------------------------- arithmetic

@njit(**OPTS)
def floordiv64(a, b):
    """``a // b`` on int64 with Python's floor, ``b != 0``; ``-2**63 // -1`` wraps as NumPy's does."""
    if b == -1:
        return -a
    q = a // b
    return q


@njit(**OPTS)
def mod64(a, b):
    if b == -1:
        return a - a
    return a % b


@njit(**OPTS)
def ipow64(a, b):
    """Integer ``a ** b`` (``gpusim.runtime.core.Runtime.ipow``): repeated squaring, wrapping; a negative
    exponent gives 0, except for a base of 1 (1), -1 (+-1) and 0 (the type's minimum, fixed by the caller)."""
    neg = b < 0
    e = -b if neg else b
    r = a - a + 1
    x = a
    while e != 0:
        if e & 1:
            r = r * x
        e = e >> 1
        x = x * x
    if neg:
        if a == 1:
            return a - a + 1
        if a == -1:
            return r
        return a - a
    return r


@njit(**OPTS)
def ipowu64(a, b):
    r = np.uint64(1)
    x = a
    e = b
    while e != 0:
        if e & np.uint64(1):
            r = r * x
        e = e >> np.uint64(1)
        x = x * x
    return r


@njit(**OPTS)
def fma64(a, b, c):
    """``gpusim.runtime.core.fma64`` for one value."""
    split = 134217729.0
    p = a * b
    t = split * a
    ah = t - (t - a)
    al = a - ah
    t = split * b
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    z = s - p
    err = (p - (s - z)) + (c - z)
    r = s + (err + e)
    if np.isfinite(r):
        return r
    return p + c


@njit(**OPTS)
def popc64(x, nbits):
    u = np.uint64(x) & (np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - nbits))
    c = 0
    while u:
        u &= u - np.uint64(1)
        c += 1
    return c


@njit(**OPTS)
def bitlen64(x, nbits):
    u = np.uint64(x) & (np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - nbits))
    n = 0
    while u:
        u = u >> np.uint64(1)
        n += 1
    return n


@njit(**OPTS)
def ffs64(x, nbits):
    u = np.uint64(x) & (np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - nbits))
    if u == 0:
        return 0
    k = 1
    while not (u & np.uint64(1)):
        u = u >> np.uint64(1)
        k += 1
    return k


@njit(**OPTS)
def brev64(x, nbits):
    u = np.uint64(x) & (np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - nbits))
    r = np.uint64(0)
    for _ in range(nbits):
        r = (r << np.uint64(1)) | (u & np.uint64(1))
        u = u >> np.uint64(1)
    return r


@njit(**OPTS)
def minf(a, b):
    """``np.minimum`` on two floats: NaN propagates; of two equal values the second."""
    return a if (a < b or a != a) else b


@njit(**OPTS)
def maxf(a, b):
    return a if (a > b or a != a) else b


@njit(inline="always")
def _squaring(r, x, e):
    k = 0
    while e != 0 and k < 64:
        if e & 1:
            r = r * x
        e = e >> 1
        x = x * x
        k += 1
    return r


@njit(**OPTS)
def fpow32(a, n, scalar_path):
    """``float32 ** int`` (``Runtime.fpow``): squaring in float32, ``1 / r`` for a negative exponent; a
    uniform value with an exponent past 2**16 goes through float64 ``pow`` as numba's lowering does."""
    neg = n < 0
    e = -n if neg else n
    if scalar_path and e > 0x10000:
        r = np.float32(np.float64(a) ** np.float64(e))
    else:
        r = _squaring(np.float32(1), a, e)
    if neg:
        r = np.float32(1) / r
    return r


@njit(**OPTS)
def fpow64(a, n, scalar_path):
    neg = n < 0
    e = -n if neg else n
    if scalar_path and e > 0x10000:
        r = np.float64(a) ** np.float64(e)
    else:
        r = _squaring(np.float64(1), a, e)
    if neg:
        r = np.float64(1) / r
    return r




@njit(**OPTS)
def oob(res, lane, i0, n0, i1, n1, i2, n2, i3, n3):
    """One lane's index outside the array: the first such lane of the access is described."""
    if res[S_OOB] == 0:
        res[S_OOB_LANE] = lane
        res[S_OOB_IDX] = i0
        res[S_OOB_IDX + 1] = i1
        res[S_OOB_IDX + 2] = i2
        res[S_OOB_IDX + 3] = i3
        if not (0 <= i0 < n0):
            res[S_OOB_DIM] = 0
        elif not (0 <= i1 < n1):
            res[S_OOB_DIM] = 1
        elif not (0 <= i2 < n2):
            res[S_OOB_DIM] = 2
        else:
            res[S_OOB_DIM] = 3
    res[S_OOB] += 1


@njit(**OPTS)
def grow_trace_barriers(BLOG, BBLK, I, nb, DESC, kblog, kbblk):
    """Room for one more barrier record; DESC follows the arrays."""
    if I[I_BLOG] + 1 > BLOG.shape[0]:
        out = np.zeros((BLOG.shape[0] * 2 + 16, BLOG.shape[1]), BLOG.dtype)
        out[:BLOG.shape[0]] = BLOG
        BLOG = out
    if I[I_BBLK] + nb > BBLK.shape[0]:
        cap = BBLK.shape[0] * 2 + nb
        out1 = np.zeros(cap, BBLK.dtype)
        out1[:BBLK.shape[0]] = BBLK
        BBLK = out1
    DESC[kblog] = BLOG.ctypes.data
    DESC[kblog + 1] = BLOG.shape[0]
    DESC[kblog + 2] = BLOG.shape[1]
    DESC[kbblk] = BBLK.ctypes.data
    DESC[kbblk + 1] = BBLK.shape[0]
    DESC[kbblk + 2] = 1
    return BLOG, BBLK
