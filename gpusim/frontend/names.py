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

#: cuda.<name> values that differ per lane
VARYING_CUDA = {
    "threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z", "laneid",
}
#: cuda.<name> values that are the same in every lane
UNIFORM_CUDA = {
    "blockDim.x", "blockDim.y", "blockDim.z", "gridDim.x", "gridDim.y", "gridDim.z", "warpsize",
}
#: callables under cuda.<name>; the value says whether the result varies per lane
CUDA_CALLS = {
    "grid": True, "gridsize": False,
    "syncthreads": True, "syncthreads_count": True, "syncthreads_and": True, "syncthreads_or": True,
    "syncwarp": True, "threadfence": True, "threadfence_block": True, "threadfence_system": True,
    "shfl_sync": True, "shfl_up_sync": True, "shfl_down_sync": True, "shfl_xor_sync": True,
    "ballot_sync": True, "any_sync": True, "all_sync": True, "eq_sync": True, "activemask": True,
    "lanemask_lt": True, "popc": None, "brev": None, "clz": None, "ffs": None, "fma": None,
    "shared.array": True, "local.array": True, "const.array_like": False,
    "atomic.add": True, "atomic.sub": True, "atomic.max": True, "atomic.min": True, "atomic.exch": True,
    "atomic.cas": True, "atomic.compare_and_swap": True, "atomic.inc": True, "atomic.dec": True,
    "atomic.and_": True, "atomic.or_": True, "atomic.xor": True, "atomic.nanmax": True, "atomic.nanmin": True,
}
# None above: varying exactly when an argument varies

BUILTINS = {"range", "abs", "min", "max", "round", "int", "float", "bool", "len", "divmod"}

MATH_FUNCS = {
    "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "pow", "fabs", "floor", "ceil",
    "trunc", "erf", "erfc", "gamma", "lgamma", "hypot", "copysign", "fmod", "isnan", "isinf", "isfinite",
    "radians", "degrees", "ldexp", "frexp", "modf", "remainder",
}
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


def _dtype_of(obj: Any) -> np.dtype | None:
    """numba scalar types and NumPy scalar types -> np.dtype; else None."""
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return np.dtype(obj)
    if isinstance(obj, np.dtype):
        return obj
    mod = type(obj).__module__ or ""
    if mod.startswith("numba.core.types") or mod.startswith("numba.types"):
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
        if mname == "numba.cuda" or mname.startswith("numba.cuda."):
            return ModuleRef("cuda")
        if mname == "math":
            return ModuleRef("math")
        if mname == "numpy":
            return ModuleRef("numpy")
        if mname == "numba" or mname.startswith("numba.core.types") or mname == "numba.types":
            return ModuleRef("numba")
        raise LookupError(f"module {mname!r}")
    if hasattr(obj, "py_func") and callable(getattr(obj, "py_func", None)):
        return DeviceFnRef(obj.py_func)
    mod = getattr(obj, "__module__", None) or ""
    if mod.startswith("numba.cuda") and not isinstance(obj, (int, float)):
        qual = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or name
        return CudaRef(str(qual))
    dt = _dtype_of(obj)
    if dt is not None and obj not in (float, int, bool):
        return DTypeRef(dt)
    if isinstance(obj, (bool, int, float, np.integer, np.floating, np.bool_)):
        return obj
    if isinstance(obj, tuple) and all(isinstance(v, (bool, int, float, np.integer, np.floating)) for v in obj):
        return obj
    if isinstance(obj, np.ndarray):
        return ConstArrayRef(obj, name)
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
