"""Names a kernel may use: the ``numba.cuda`` namespace, ``math``, numba and NumPy types, device functions and
module constants, and what each global value of a kernel's module is to the front end.

A kernel resolves ``cuda.threadIdx.x`` however ``cuda`` was imported (``from numba import cuda``, ``import
numba.cuda as cuda``, ``from numba.cuda import threadIdx``): by the module or object's own name, without
importing numba.cuda here.
"""

from __future__ import annotations

import ast
import math
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

# ---------------------------------------------------------------------------------------------- names

#: builtins a kernel may call
BUILTINS = {"range", "abs", "min", "max", "round", "int", "float", "bool", "len", "divmod", "print"}
MATH_CONSTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan, "tau": math.tau}


@dataclass(frozen=True)
class CudaRef:
    """A name in the numba.cuda namespace, e.g. ``CudaRef("threadIdx.x")``."""

    path: str


@dataclass(frozen=True)
class ModuleRef:
    kind: str  # "cuda" | "math" | "numpy" | "numba"


@dataclass(frozen=True)
class DTypeRef:
    """A scalar type usable as a cast or a dtype: numba.float32, np.int32, ..."""

    dtype: np.dtype


@dataclass(frozen=True)
class DeviceFnRef:
    func: Any  # the Python function


@dataclass(frozen=True)
class ConstArrayRef:
    array: np.ndarray
    name: str
    by_pointer: bool = False


@dataclass(frozen=True, eq=False)
class CapturedDeviceArray:
    """A global a kernel names that is a device array: numba-cuda captures it by pointer, so the kernel reads
    its contents as they are at each launch (a NumPy global is frozen when the kernel is compiled). The drop-in
    (``gpusim.cudasim``) puts the NumPy array behind a simulator device array in one of these."""

    array: np.ndarray


def _dtype_of(obj: Any) -> np.dtype | None:
    """numba scalar types and NumPy scalar types -> np.dtype; else None."""
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return np.dtype(obj)
    if isinstance(obj, np.dtype):
        return obj
    mod = type(obj).__module__ or ""
    if mod.startswith(("numba.core.types", "numba.types", "numba.cuda.types")):
        name = getattr(obj, "name", str(obj))
        alias = {"float16": "float16", "float32": "float32", "float64": "float64", "boolean": "bool",
                 "bool_": "bool", "intp": "int64", "uintp": "uint64", "bool": "bool"}
        name = alias.get(name, name)
        try:
            return np.dtype(name)
        except TypeError:
            return None
    if obj is float:
        return np.dtype(np.float64)
    if obj is int:
        return np.dtype(np.int64)
    if obj is bool:
        return np.dtype(np.bool_)
    return None


def classify_global(name: str, obj: Any) -> Any:
    """Turn a global (or closure) value into what a kernel may use it as, or raise ``LookupError``."""
    if isinstance(obj, types.ModuleType):
        mname = obj.__name__
        if mname in ("numba.types", "numba.cuda.types") or mname.startswith("numba.core.types"):
            return ModuleRef("numba")
        if mname == "numba.cuda" or mname.startswith("numba.cuda."):
            return ModuleRef("cuda")
        if mname == "math":
            return ModuleRef("math")
        if mname == "numpy":
            return ModuleRef("numpy")
        if mname == "numba":
            return ModuleRef("numba")
        raise LookupError(f"module {mname!r}")
    if hasattr(obj, "py_func") and callable(getattr(obj, "py_func", None)):
        return DeviceFnRef(obj.py_func)
    dt = _dtype_of(obj)
    if dt is not None and obj not in (float, int, bool):
        return DTypeRef(dt)
    mod = getattr(obj, "__module__", None) or ""
    if mod.startswith("numba.cuda") and not isinstance(obj, (int, float)):
        qual = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or name
        return CudaRef(str(qual))
    if isinstance(obj, (bool, int, float, np.integer, np.floating, np.bool_)):
        return obj
    if isinstance(obj, tuple) and all(isinstance(v, (bool, int, float, np.integer, np.floating)) for v in obj):
        return obj
    if isinstance(obj, np.ndarray):
        return ConstArrayRef(obj, name)
    if isinstance(obj, CapturedDeviceArray):
        return ConstArrayRef(obj.array, name, by_pointer=True)
    if isinstance(obj, types.FunctionType):
        return DeviceFnRef(obj)
    raise LookupError(type(obj).__name__)


#: constructs outside the kernel subset, named for messages
CONSTRUCT_NAMES = {
    ast.List: "a list", ast.Dict: "a dict", ast.Set: "a set", ast.ListComp: "a list comprehension",
    ast.DictComp: "a dict comprehension", ast.SetComp: "a set comprehension", ast.GeneratorExp: "a generator",
    ast.Lambda: "a lambda", ast.JoinedStr: "an f-string", ast.Try: "try/except", ast.With: "a with block",
    ast.Raise: "raise", ast.ClassDef: "a class", ast.FunctionDef: "a nested function", ast.Global: "global",
    ast.Nonlocal: "nonlocal", ast.Delete: "del", ast.Import: "import", ast.ImportFrom: "import",
    ast.Assert: "assert", ast.Yield: "yield", ast.Await: "await", ast.Starred: "*-unpacking",
    ast.NamedExpr: "the := operator",
}


@dataclass(frozen=True)
class MathRef:
    """``math.<name>``: a function or a constant of the math module."""

    name: str


@dataclass(frozen=True)
class BuiltinRef:
    """A Python builtin a kernel may call (``BUILTINS``)."""

    name: str


@dataclass(frozen=True)
class OtherRef:
    """An attribute of numpy or numba that is neither a dtype nor a constant (``np.sqrt``, ``numba.njit``)."""

    module: str
    attr: str


NUMPY_CONSTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan, "euler_gamma": 0.5772156649015329}


def qualified(base: Any, parts: list[str]) -> Any:
    """What ``base.part0.part1...`` refers to, for ``base`` a classified global (``classify_global``)."""
    if not parts:
        return base
    if isinstance(base, ModuleRef):
        if base.kind == "cuda":
            return CudaRef(".".join(parts))
        if base.kind == "math":
            return MathRef(".".join(parts))
        if base.kind == "numba" and parts[0] == "cuda" and len(parts) > 1:  # numba.cuda.grid(1)
            return CudaRef(".".join(parts[1:]))
        mod: Any = np if base.kind == "numpy" else __import__("numba")
        if base.kind == "numba" and parts[0] == "cuda":
            return ModuleRef("cuda")
        obj: Any = mod
        try:
            for p in parts:
                obj = getattr(obj, p)
        except AttributeError:
            return OtherRef(base.kind, ".".join(parts))
        dt = _dtype_of(obj)
        if dt is not None and obj not in (float, int, bool):
            return DTypeRef(dt)
        if base.kind == "numpy" and len(parts) == 1 and parts[0] in NUMPY_CONSTS:
            return float(NUMPY_CONSTS[parts[0]])
        return OtherRef(base.kind, ".".join(parts))
    if isinstance(base, CudaRef):
        return CudaRef(base.path + "." + ".".join(parts))
    return None
