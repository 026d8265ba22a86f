"""Names a kernel may use: the ``numba.cuda`` namespace, ``math``, numba and NumPy types, device functions and
module constants, and what each global value of a kernel's module is to the front end.

A kernel resolves ``cuda.threadIdx.x`` however ``cuda`` was imported (``from numba import cuda``, ``import
numba.cuda as cuda``, ``from numba.cuda import threadIdx``): by the module or object's own name, without
importing numba.cuda here.
"""

from __future__ import annotations

import ast
import enum
import math
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

# ---------------------------------------------------------------------------------------------- names

#: builtins a kernel may call
BUILTINS = {"range", "abs", "min", "max", "round", "int", "float", "bool", "len", "divmod", "print", "complex",
            "pow", "tuple", "isinstance"}
MATH_CONSTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan, "tau": math.tau}


@dataclass(frozen=True)
class CudaRef:
    """A name in the numba.cuda namespace, e.g. ``CudaRef("threadIdx.x")``."""

    path: str


@dataclass(frozen=True)
class ModuleRef:
    kind: str  # "cuda" | "math" | "numpy" | "numba" | "operator" | "cmath"


@dataclass(frozen=True)
class DTypeRef:
    """A scalar type usable as a cast or a dtype: numba.float32, np.int32, ..."""

    dtype: np.dtype


#: the ``operator`` module's functions a kernel may call, and the operator each one is (numba-cuda types
#: ``operator.add(a, b)`` as ``a + b``)
OPERATOR_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "truediv", "floordiv": "floordiv",
                   "mod": "mod", "pow": "pow", "lshift": "lshift", "rshift": "rshift", "or_": "or", "xor": "xor",
                   "and_": "and", "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
OPERATOR_UNARY = {"neg": "neg", "pos": "pos", "invert": "invert", "inv": "invert", "not_": "not"}


@dataclass(frozen=True)
class OperatorRef:
    """``operator.<name>`` (or a name bound to it): a function of the operator module (``OPERATOR_BINARY``,
    ``OPERATOR_UNARY``)."""

    name: str


@dataclass(frozen=True)
class PyModuleRef:
    """A Python module other than those ``ModuleRef`` names: ``mod.name`` is whatever that attribute is."""

    module: types.ModuleType


@dataclass(frozen=True)
class IntEnumRef:
    """An ``IntEnum`` class: ``Cls.member`` is the member's int."""

    cls: type


@dataclass(frozen=True)
class DeviceFnRef:
    func: Any  # the Python function
    #: a plain Python function named as a global, not ``cuda.jit(device=True)``: numba's simulator calls it,
    #: numba-cuda cannot type it (``Untyped global name``), so gpusim calls it only under the drop-in
    plain: bool = False


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
        if type(obj).__name__ == "Record" and isinstance(getattr(obj, "dtype", None), np.dtype):
            return obj.dtype  # numba's record type (numpy_support.from_dtype) is its structured dtype
        name = getattr(obj, "name", str(obj))
        alias = {"float16": "float16", "float32": "float32", "float64": "float64", "boolean": "bool",
                 "bool_": "bool", "intp": "int64", "uintp": "uint64", "bool": "bool"}
        name = alias.get(name, name)
        try:
            return np.dtype(name)
        except (TypeError, ValueError):
            return None
    if obj is float:
        return np.dtype(np.float64)
    if obj is int:
        return np.dtype(np.int64)
    if obj is bool:
        return np.dtype(np.bool_)
    if obj is complex:
        return np.dtype(np.complex128)
    return None


def _operator_name(obj: Any) -> str | None:
    """The name of an ``operator``-module function a kernel may call, or None."""
    import operator

    name = getattr(obj, "__name__", None)
    if isinstance(obj, types.BuiltinFunctionType) and isinstance(name, str) and \
            (name in OPERATOR_BINARY or name in OPERATOR_UNARY) and getattr(operator, name, None) is obj:
        return name
    return None


def classify_global(name: str, obj: Any) -> Any:
    """Turn a global (or closure) value into what a kernel may use it as, or raise ``LookupError``."""
    if isinstance(obj, types.ModuleType):
        mname = obj.__name__
        if mname in ("numba.types", "numba.cuda.types") or mname.startswith("numba.core.types"):
            return ModuleRef("numba")
        if mname == "numba.cuda.libdevice":
            return CudaRef("libdevice")
        if mname == "numba.cuda" or mname.startswith("numba.cuda."):
            return ModuleRef("cuda")
        if mname == "math":
            return ModuleRef("math")
        if mname == "numpy":
            return ModuleRef("numpy")
        if mname == "numba":
            return ModuleRef("numba")
        if mname == "operator":
            return ModuleRef("operator")
        if mname == "cmath":
            return ModuleRef("cmath")
        return PyModuleRef(obj)  # another module: what its attributes are (``mymod.add(x, 1)``)
    if isinstance(obj, enum.IntEnum):  # an IntEnum member is the int it is (numba's IntEnumMember)
        return int(obj)
    if isinstance(obj, type) and issubclass(obj, enum.IntEnum):
        return IntEnumRef(obj)
    if isinstance(obj, enum.Enum):  # a member of another Enum: a value of its class (frontend.enums)
        return obj
    if isinstance(obj, type) and issubclass(obj, enum.Enum):
        from .enums import EnumClassRef

        return EnumClassRef(obj)
    op = _operator_name(obj)
    if op is not None:
        return OperatorRef(op)
    if hasattr(obj, "py_func") and callable(getattr(obj, "py_func", None)):
        return DeviceFnRef(obj.py_func)
    dt = _dtype_of(obj)
    if dt is not None and obj not in (float, int, bool, complex):
        return DTypeRef(dt)
    mod = getattr(obj, "__module__", None) or ""
    if mod.startswith("numba.cuda") and not mod.startswith("numba.cuda.tests") and not isinstance(obj, (int, float)):
        qual = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or name
        if mod == "numba.cuda.libdevice":       # from numba.cuda.libdevice import expf
            qual = f"libdevice.{qual}"
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
        return DeviceFnRef(obj, plain=True)
    raise LookupError(type(obj).__name__)


#: constructs outside the kernel subset, named for messages
CONSTRUCT_NAMES = {
    ast.List: "a list", ast.Dict: "a dict", ast.Set: "a set", ast.ListComp: "a list comprehension",
    ast.DictComp: "a dict comprehension", ast.SetComp: "a set comprehension", ast.GeneratorExp: "a generator",
    ast.Lambda: "a lambda", ast.JoinedStr: "an f-string", ast.Try: "try/except", ast.With: "a with block",
    ast.ClassDef: "a class", ast.Global: "global",
    ast.Nonlocal: "nonlocal", ast.Delete: "del", ast.Import: "import", ast.ImportFrom: "import",
    ast.Assert: "assert", ast.Yield: "yield", ast.Await: "await", ast.Starred: "*-unpacking",
    ast.NamedExpr: "the := operator",
}


@dataclass(frozen=True)
class MathRef:
    """``math.<name>``: a function or a constant of the math module."""

    name: str


@dataclass(frozen=True)
class CmathRef:
    """``cmath.<name>``: a function or a constant of the cmath module."""

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


def attribute_chain(node: ast.AST) -> tuple[ast.AST, list[str]]:
    """``a.b.c`` -> (the node ``a``, ["b", "c"])."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    parts.reverse()
    return node, parts


def qualified(base: Any, parts: list[str]) -> Any:
    """What ``base.part0.part1...`` refers to, for ``base`` a classified global (``classify_global``)."""
    if not parts:
        return base
    if isinstance(base, ModuleRef):
        if base.kind == "cuda":
            return CudaRef(".".join(parts))
        if base.kind == "math":
            return MathRef(".".join(parts))
        if base.kind == "cmath":
            return CmathRef(".".join(parts))
        if base.kind == "operator":
            import operator

            return OperatorRef(parts[0]) if len(parts) == 1 and _operator_name(getattr(operator, parts[0], None)) \
                else OtherRef("operator", ".".join(parts))
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
    if isinstance(base, PyModuleRef):
        if not hasattr(base.module, parts[0]):
            return None
        try:
            return qualified(classify_global(parts[0], getattr(base.module, parts[0])), parts[1:])
        except LookupError:
            return None
    if isinstance(base, IntEnumRef) and len(parts) == 1 and isinstance(base.cls.__dict__.get(parts[0]), base.cls):
        return int(base.cls.__dict__[parts[0]])
    from .enums import EnumClassRef, member_of

    if isinstance(base, EnumClassRef) and len(parts) == 1:
        return member_of(base.cls, parts[0])
    return None
