"""Arrays as a kernel sees them: global arguments, shared (per block), local (per lane) and const arrays.

An ``ArrayHandle`` holds the data, the shape the kernel sees (``.shape``/``.size``/``.ndim`` as int64, like
numba), the ``ArrayInfo`` observers get, and the race shadow. Element identity is the row-major flat index
within the array the kernel sees; shared data is stored ``(blocks_in_chunk, size)`` and local data
``(lanes_in_chunk, size)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload, register_jitable

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
#
# Each operation's rule, stated once: what a lane stores, given the element's old value, the lane's value and
# its comparand. The rules are plain functions that numba can also compile (``register_jitable``): the rounds
# below call them on arrays of lanes (lanes on distinct elements at once), the compiled loops on one lane's
# numbers. Integer arithmetic wraps in both: NumPy's array arithmetic in the element type, and the loops'
# stores, which keep the low bits.


def _pick(cond, a, b):
    """``a`` where ``cond`` holds, else ``b``."""
    return np.where(cond, a, b)


@overload(_pick)
def _pick_one_lane(cond, a, b):
    def pick(cond, a, b):
        return a if cond else b
    return pick


def _number(x, n):
    """The number ``n`` in ``x``'s element type: so ``old + 1`` of a uint64 stays uint64 (numba computes
    uint64 +/- int64 in float64, which is wrong above 2^53)."""
    return x.dtype.type(n)


@overload(_number)
def _number_one_lane(x, n):
    ty = x

    def number(x, n):
        return ty(n)
    return number


@register_jitable
def _add(old, v, c):
    return old + v


@register_jitable
def _sub(old, v, c):
    return old - v


@register_jitable
def _max(old, v, c):  # a NaN stored or given changes nothing (numba-cuda's atomic max)
    return _pick(v > old, v, old)


@register_jitable
def _min(old, v, c):
    return _pick(v < old, v, old)


@register_jitable
def _exch(old, v, c):
    return v


@register_jitable
def _inc(old, v, c):  # CUDA's atomicInc: ((old >= val) ? 0 : (old+1))
    return _pick(old >= v, _number(old, 0), old + _number(old, 1))


@register_jitable
def _dec(old, v, c):  # CUDA's atomicDec: (((old == 0) || (old > val)) ? val : (old-1))
    return _pick((old == _number(old, 0)) | (old > v), v, old - _number(old, 1))


@register_jitable
def _and(old, v, c):
    return old & v


@register_jitable
def _or(old, v, c):
    return old | v


@register_jitable
def _xor(old, v, c):
    return old ^ v


@register_jitable
def _cas(old, v, c):
    return _pick(old == c, v, old)


@register_jitable
def _nanmax(old, v, c):  # a NaN stored is replaced, a NaN given is ignored; integers: max
    return _pick((v > old) | ((old != old) & (v == v)), v, old)


@register_jitable
def _nanmin(old, v, c):
    return _pick((v < old) | ((old != old) & (v == v)), v, old)


#: each operation's rule, by name; its position is the operation's code in the compiled loops
RULES = {"add": _add, "sub": _sub, "max": _max, "min": _min, "exch": _exch, "inc": _inc, "dec": _dec,
         "and": _and, "or": _or, "xor": _xor, "cas": _cas, "nanmax": _nanmax, "nanmin": _nanmin}
OPS = {name: code for code, name in enumerate(RULES)}
ADD, SUB, MAX, MIN, EXCH, INC, DEC, AND, OR, XOR, CAS, NANMAX, NANMIN = OPS.values()
#: the rules of integers only (bitwise, and the counters' wrap)
INTEGER_ONLY = frozenset({"inc", "dec", "and", "or", "xor"})


@register_jitable
def _any_type(op, old, v, c):
    """The rule of operation code ``op`` on one lane's numbers, for the rules of every element type."""
    if op == ADD:
        return _add(old, v, c)
    if op == SUB:
        return _sub(old, v, c)
    if op == MAX:
        return _max(old, v, c)
    if op == MIN:
        return _min(old, v, c)
    if op == EXCH:
        return _exch(old, v, c)
    if op == CAS:
        return _cas(old, v, c)
    if op == NANMAX:
        return _nanmax(old, v, c)
    return _nanmin(old, v, c)


@register_jitable
def _integer(op, old, v, c):
    """The same on integers, which have the ``INTEGER_ONLY`` rules too."""
    if op == INC:
        return _inc(old, v, c)
    if op == DEC:
        return _dec(old, v, c)
    if op == AND:
        return _and(old, v, c)
    if op == OR:
        return _or(old, v, c)
    if op == XOR:
        return _xor(old, v, c)
    return _any_type(op, old, v, c)


def _one_lane(op, old, v, c):
    """The rule of operation code ``op``, for the compiled loop (``_integer`` or ``_any_type`` by the element
    type: numba compiles every branch, and floats have no bitwise operators)."""
    return tuple(RULES.values())[op](old, v, c)


@overload(_one_lane)
def _one_lane_typed(op, old, v, c):
    return _integer if isinstance(old, types.Integer) else _any_type


@njit(cache=True)
def _atomic_loop(data, elems, vals, cmps, op, olds):
    """The lanes one at a time, in lane order (``INTEGER_ONLY`` rules on floats are refused before)."""
    for k in range(elems.size):
        e = elems[k]
        old = data[e]
        olds[k] = old
        data[e] = _one_lane(op, old, vals[k], cmps[k])


#: lanes of one atomic that may update one element (so many rounds of ``_atomic_rounds``, about 15 us each)
#: before the compiled loop is used: that loop is compiled once per element type and process, which costs
#: more than a small launch's whole run (about a second with numba's cache cold, 20-30 ms warm)
MAX_ROUNDS = 256


def _atomic_rounds(data: np.ndarray, elems: np.ndarray, vals: np.ndarray, cmps: np.ndarray, op: str,
                   olds: np.ndarray, rounds: np.ndarray) -> None:
    """The compiled loop's result, computed in rounds: round ``r`` applies ``op``'s rule, at once, to the
    ``r``-th lane (in lane order) of every element that ``r + 1`` or more lanes update; lanes on one element
    stay in order, and lanes on different elements never meet."""
    rule = RULES[op]
    by_round = np.argsort(rounds, kind="stable")
    ends = np.cumsum(np.bincount(rounds)) if rounds.size else ()
    start = 0
    for end in ends:
        k = by_round[start:end]
        start = end
        e = elems[k]
        old = data[e]
        olds[k] = old
        data[e] = rule(old, vals[k], cmps[k])


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
    if dt.kind == "f" and op in INTEGER_ONLY:
        raise TypeError(f"atomic {op} needs an integer array, not {dt}")
    if dt.kind not in "fiu":
        raise TypeError(f"atomics on {dt} arrays are not supported")
    if dt.itemsize >= 4 or dt.kind != "f":  # float16: the compiled loop's error, as before
        rounds = _rounds(elems)
        if rounds.size == 0 or rounds.max() < MAX_ROUNDS:
            with np.errstate(all="ignore"):  # inf - inf and the like: the compiled loop is silent too
                _atomic_rounds(flat, elems, vals, cmps, op, olds, rounds)
            return olds
    _atomic_loop(flat, elems, vals, cmps, OPS[op], olds)
    return olds
