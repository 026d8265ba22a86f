"""Arrays as a kernel sees them: global arguments, shared (per block), local (per lane) and const arrays.

An ``ArrayHandle`` holds the data, the shape the kernel sees (``.shape``/``.size``/``.ndim`` as int64, like
numba), the ``ArrayInfo`` observers get, and the race shadow. Element identity is the row-major flat index
within the array the kernel sees; shared data is stored ``(blocks_in_chunk, size)`` and local data
``(lanes_in_chunk, size)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..observe.events import ArrayInfo
from ..observe.races import Shadow

GLOBAL_ALIGN = 256


class ArrayHandle:
    __slots__ = ("info", "data", "flat", "shape", "size", "ndim", "cstrides", "space", "shadow", "written",
                 "name", "dtype", "writable", "shape_i")

    def __init__(self, info: ArrayInfo, data: np.ndarray, flat: np.ndarray | None, *, track: bool,
                 writable: bool = True):
        self.info = info
        self.name = info.name
        self.space = info.space
        self.dtype = info.dtype
        self.data = data
        self.flat = flat  # 1-D view for flat element access (None when the data is not contiguous)
        self.shape = tuple(np.int64(d) for d in info.shape)
        self.shape_i = tuple(int(d) for d in info.shape)
        self.size = np.int64(info.size)
        self.ndim = np.int64(len(info.shape))
        strides = []
        acc = 1
        for d in reversed(info.shape):
            strides.append(acc)
            acc *= int(d)
        self.cstrides = tuple(reversed(strides))
        self.writable = writable
        nshadow = flat.size if flat is not None else info.size
        self.shadow = Shadow(nshadow) if track else None
        self.written = np.zeros(nshadow, np.bool_) if info.space == "local" else None


def global_handle(aid: int, name: str, array: np.ndarray, address: int, track: bool) -> ArrayHandle:
    info = ArrayInfo(aid, name, "global", array.dtype, tuple(array.shape), address)
    flat = array.reshape(-1) if array.flags.c_contiguous else None
    return ArrayHandle(info, array, flat, track=track)


def const_handle(aid: int, name: str, array: np.ndarray, address: int) -> ArrayHandle:
    data = np.ascontiguousarray(array).copy()
    data.setflags(write=False)
    info = ArrayInfo(aid, name, "const", data.dtype, tuple(data.shape), address)
    return ArrayHandle(info, data, data.reshape(-1), track=False, writable=False)


def shared_handle(aid: int, name: str, shape: tuple[int, ...], dtype: np.dtype, blocks: int, offset: int,
                  buffer: np.ndarray | None = None) -> ArrayHandle:
    info = ArrayInfo(aid, name, "shared", np.dtype(dtype), tuple(shape), offset)
    size = int(np.prod(shape, dtype=np.int64))
    if buffer is None:
        data = np.zeros((blocks, size), dtype)
    else:  # dynamic shared memory: a view of the block's byte buffer
        data = buffer.view(dtype)[:, :size]
    return ArrayHandle(info, data, data.reshape(-1) if data.flags.c_contiguous else None, track=True)


def local_handle(aid: int, name: str, shape: tuple[int, ...], dtype: np.dtype, lanes: int) -> ArrayHandle:
    info = ArrayInfo(aid, name, "local", np.dtype(dtype), tuple(shape), 0)
    size = int(np.prod(shape, dtype=np.int64))
    data = np.zeros((lanes, size), dtype)
    return ArrayHandle(info, data, data.reshape(-1), track=False)


# ---------------------------------------------------------------------------------------------- atomics

OPS = {"add": 0, "sub": 1, "max": 2, "min": 3, "exch": 4, "inc": 5, "dec": 6, "and": 7, "or": 8, "xor": 9,
       "cas": 10, "nanmax": 11, "nanmin": 12}


@njit(cache=True)
def _atomic_float(data, elems, vals, cmps, op, olds):
    for k in range(elems.size):
        e = elems[k]
        old = data[e]
        olds[k] = old
        v = vals[k]
        if op == 0:
            data[e] = old + v
        elif op == 1:
            data[e] = old - v
        elif op == 2:  # max: a NaN stored or given changes nothing (numba-cuda's atomic max)
            if v > old:
                data[e] = v
        elif op == 3:
            if v < old:
                data[e] = v
        elif op == 4:
            data[e] = v
        elif op == 10:
            if old == cmps[k]:
                data[e] = v
        elif op == 11:  # nanmax: a NaN stored is replaced, a NaN given is ignored
            if v > old or (old != old and v == v):
                data[e] = v
        elif op == 12:
            if v < old or (old != old and v == v):
                data[e] = v


@njit(cache=True)
def _atomic_int(data, elems, vals, cmps, op, olds):
    for k in range(elems.size):
        e = elems[k]
        old = data[e]
        olds[k] = old
        v = vals[k]
        if op == 0:
            data[e] = old + v
        elif op == 1:
            data[e] = old - v
        elif op == 2:
            if v > old:
                data[e] = v
        elif op == 3:
            if v < old:
                data[e] = v
        elif op == 4:
            data[e] = v
        elif op == 5:
            data[e] = 0 if old >= v else old + 1
        elif op == 6:
            data[e] = v if (old == 0 or old > v) else old - 1
        elif op == 7:
            data[e] = old & v
        elif op == 8:
            data[e] = old | v
        elif op == 9:
            data[e] = old ^ v
        elif op == 10:
            if old == cmps[k]:
                data[e] = v
        elif op == 11:
            if v > old:
                data[e] = v
        elif op == 12:
            if v < old:
                data[e] = v


#: lanes of one atomic that may update one element (so many rounds of ``_atomic_rounds``, about 15 us each)
#: before the compiled loop is used: that loop is compiled once per element type and process, which costs
#: more than a small launch's whole run (about a second with numba's cache cold, 20-30 ms warm)
MAX_ROUNDS = 256


def _updated(op: int, old: np.ndarray, v: np.ndarray, c: np.ndarray) -> np.ndarray:
    """What ``_atomic_float``/``_atomic_int`` store for each lane, lanes on distinct elements at once (arrays
    of the element type: integer arithmetic wraps, as the compiled loop's stores do)."""
    if op == 0:
        return old + v
    if op == 1:
        return old - v
    if op == 2 or (op == 11 and old.dtype.kind != "f"):
        return np.where(v > old, v, old)
    if op == 3 or (op == 12 and old.dtype.kind != "f"):
        return np.where(v < old, v, old)
    if op == 4:
        return v
    if op == 5:
        return np.where(old >= v, np.zeros_like(old), old + 1)
    if op == 6:
        return np.where((old == 0) | (old > v), v, old - 1)
    if op == 7:
        return old & v
    if op == 8:
        return old | v
    if op == 9:
        return old ^ v
    if op == 10:
        return np.where(old == c, v, old)
    nan_old = (old != old) & (v == v)
    if op == 11:
        return np.where((v > old) | nan_old, v, old)
    return np.where((v < old) | nan_old, v, old)


def _atomic_rounds(data: np.ndarray, elems: np.ndarray, vals: np.ndarray, cmps: np.ndarray, op: int,
                   olds: np.ndarray, rounds: np.ndarray) -> None:
    """The compiled loop's result, computed in rounds: round ``r`` applies, at once, the ``r``-th lane (in
    lane order) of every element that ``r + 1`` or more lanes update; lanes on one element stay in order, and
    lanes on different elements never meet."""
    by_round = np.argsort(rounds, kind="stable")
    ends = np.cumsum(np.bincount(rounds)) if rounds.size else ()
    start = 0
    for end in ends:
        k = by_round[start:end]
        start = end
        e = elems[k]
        old = data[e]
        olds[k] = old
        data[e] = _updated(op, old, vals[k], cmps[k])


def _rounds(elems: np.ndarray) -> np.ndarray:
    """For each lane, how many earlier lanes update the same element."""
    order = np.argsort(elems, kind="stable")
    s = elems[order]
    first = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    starts = np.repeat(first, np.diff(np.r_[first, s.size]))
    rounds = np.empty(elems.size, np.int64)
    rounds[order] = np.arange(s.size) - starts
    return rounds


def apply_atomic(op: str, flat: np.ndarray, elems: np.ndarray, vals: np.ndarray, cmps: np.ndarray | None
                 ) -> np.ndarray:
    """Apply ``op`` for each lane in order (as if the hardware serialised them); return the old values."""
    dt = flat.dtype
    vals = np.ascontiguousarray(np.broadcast_to(vals, elems.shape), dtype=dt)
    cmps = (np.zeros(elems.shape, dt) if cmps is None
            else np.ascontiguousarray(np.broadcast_to(cmps, elems.shape), dtype=dt))
    olds = np.empty(elems.shape, dt)
    if dt.kind == "f":
        if OPS[op] in (5, 6, 7, 8, 9):
            raise TypeError(f"atomic {op} needs an integer array, not {dt}")
        loop = _atomic_float
    elif dt.kind in "iu":
        loop = _atomic_int
    else:
        raise TypeError(f"atomics on {dt} arrays are not supported")
    if dt.itemsize >= 4 or dt.kind != "f":  # float16: the compiled loop's error, as before
        rounds = _rounds(elems)
        # uint64 inc/dec always: the compiled loop computes old +/- 1 in float64 there (numba's uint64 +/- int64)
        if rounds.size == 0 or rounds.max() < MAX_ROUNDS or (dt == np.uint64 and op in ("inc", "dec")):
            with np.errstate(all="ignore"):  # inf - inf and the like: the compiled loop is silent too
                _atomic_rounds(flat, elems, vals, cmps, OPS[op], olds, rounds)
            return olds
    loop(flat, elems, vals, cmps, OPS[op], olds)
    return olds
