"""Compiled kernels shared between function objects made from one code object.

A test suite makes the same kernel again and again: a ``cuda.jit`` inside a test method, a helper that
decorates one Python function per dtype, the drop-in's copy of a kernel with its global arrays frozen. Each
is a new function object, so gpusim's cache per function misses, and the front end would run again on
source it has already compiled. What it would produce is fixed by the code, the argument types, and the
values the code's names (and those of every device function it reaches) are bound to; so a compilation is
kept with a fingerprint of those values, and a new function whose code, signature and fingerprint match is
given the same compiled kernel. A fingerprint holds:

* plain values by value (numbers, strings, ``None``, NumPy scalars, tuples of them: a float by its bits);
* NumPy arrays by dtype, shape and contents (the front end freezes a copy of them, as numba does);
* modules, classes, functions, kernels and device functions, dtypes, numba types, enum members, and a device
  array captured by pointer, by identity (the entry holds them, so an identity cannot be reused);
* anything else makes the compilation not shareable (it is compiled per function, as without this cache).

A module the code names is held by identity and by the values of the attributes the code could read from
it (``mymod.helper`` rebound misses). A device function's own names are checked again at each hit, through
the function itself. At most ``MAX_CODES`` code objects are kept, least recently used first out.
"""

from __future__ import annotations

import enum
import threading
import types
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from .frontend.names import CapturedDeviceArray
from .frontend.source import func_globals

MAX_CODES = 512
#: compilations kept per code object (one per signature, or per fingerprint: a kernel closing over an array
#: made anew in each test)
MAX_PER_CODE = 16
#: (file, code object) -> its compilations: (key, [(function, fingerprint)], compiled), the kernel first.
#: Code objects compare by their bytecode, names, constants and line numbers, not by file: two kernels written
#: alike in two files share nothing, since the file is in the key (messages quote it).
_entries: OrderedDict[tuple[str, types.CodeType], list[tuple[Any, list[tuple[Any, tuple]], Any]]] = OrderedDict()
_names: weakref.WeakKeyDictionary[types.CodeType, tuple[str, ...]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()
hits = 0
misses = 0


class _Unshareable(Exception):
    pass


def names_of(code: types.CodeType) -> tuple[str, ...]:
    """The global and closure names ``code`` and the functions nested in it refer to."""
    found = _names.get(code)
    if found is None:
        seen: dict[str, None] = {}
        stack = [code]
        while stack:
            c = stack.pop()
            for n in c.co_names + c.co_freevars:
                seen[n] = None
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        found = _names[code] = tuple(seen)
    return found


_BY_IDENTITY = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, np.dtype, np.ufunc,
                enum.Enum)


def _token(v: Any) -> Any:
    """What the front end's result depends on in ``v`` (``_Unshareable`` when that cannot be said)."""
    if v is None or isinstance(v, (bool, int, str, bytes)):
        return (type(v), v)
    if isinstance(v, float):
        return (float, v.hex())
    if isinstance(v, complex):
        return (complex, v.real.hex(), v.imag.hex())
    if isinstance(v, np.generic):
        if v.dtype.kind == "O":
            raise _Unshareable
        return (type(v), v.tobytes())
    if isinstance(v, tuple):
        return (type(v), tuple(_token(x) for x in v))
    if isinstance(v, np.ndarray):
        if v.dtype.hasobject:
            raise _Unshareable
        return (np.ndarray, v.dtype, v.shape, np.ascontiguousarray(v).tobytes())
    if isinstance(v, CapturedDeviceArray):
        return (CapturedDeviceArray, _Same(v.array))
    if isinstance(v, _BY_IDENTITY) or hasattr(v, "py_func") or (type(v).__module__ or "").startswith("numba"):
        return _Same(v)  # numba's own objects: types, the simulator's cuda.* stand-ins, dispatchers
    raise _Unshareable


class _Same:
    """An object compared by identity (and kept alive by the fingerprint holding it)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


_MISSING = ("missing",)


def fingerprint(func: Any) -> tuple:
    """The values ``func``'s names are bound to now, as tokens (``_Unshareable`` if one cannot be). A module
    is also taken by the attributes the code could read from it (its names that the module has: ``mymod.add``
    rebound is a new fingerprint), one level deep."""
    env = func_globals(func)
    names = names_of(func.__code__)
    out = []
    for n in names:
        if n not in env:
            out.append(_MISSING)
            continue
        v = env[n]
        out.append(_token(v))
        if isinstance(v, types.ModuleType):
            attrs = vars(v)
            out.append(tuple((a, _token(attrs[a])) for a in names if a in attrs))
    return tuple(out)


def lookup(func: Any, key: Any) -> Any:
    """The compiled kernel of an earlier function with ``func``'s code, for ``key`` (signature and options), if
    every name it and its device functions read is bound as it was then; else None."""
    global hits, misses
    where = (func.__code__.co_filename, func.__code__)
    with _lock:
        cands = _entries.get(where)
        if cands is not None:
            _entries.move_to_end(where)
            cands = list(cands)
    for k, inputs, comp in cands or ():
        if k != key:
            continue
        try:
            if fingerprint(func) != inputs[0][1]:
                continue
            if all(fingerprint(f) == fp for f, fp in inputs[1:]):
                hits += 1
                return comp
        except _Unshareable:
            break
    misses += 1
    return None


def store(func: Any, key: Any, functions: list[Any], comp: Any) -> None:
    """Keep ``comp``, compiled from ``func`` (first of ``functions``: every function the front end lowered)."""
    try:
        inputs = [(f, fingerprint(f)) for f in functions]
    except _Unshareable:
        return
    where = (func.__code__.co_filename, func.__code__)
    with _lock:
        kept = _entries.setdefault(where, [])
        kept.append((key, inputs, comp))
        del kept[:-MAX_PER_CODE]
        _entries.move_to_end(where)
        while len(_entries) > MAX_CODES:
            _entries.popitem(last=False)


def clear() -> None:
    global hits, misses
    with _lock:
        _entries.clear()
        hits = misses = 0
