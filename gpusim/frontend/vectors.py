"""CUDA vector types: ``cuda.float32x4(...)``, ``cuda.int8x1(...)``, their C aliases (``cuda.float4``,
``cuda.short2``, ...), and ``.x`` ``.y`` ``.z`` ``.w``.

numba-cuda's rules: a vector type ``<base>x<n>`` is made from n values in all, each a number (converted to the
base type) or a smaller vector whose components are taken in order (``float32x4(float32x2(a, b), c, d)``).
Here a vector is a namedtuple of its components (fields x, y, z, w), so it can be named, passed to device
functions and iterated over in a tuple like any other value.
"""

from __future__ import annotations

import ast

import numpy as np

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import Scalar, Tuple

FIELDS = ("x", "y", "z", "w")
_BASES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")
#: the C names numba-cuda gives the vector types too (from NumPy's C types, as numba-cuda derives them)
_C_NAMES = {"char": np.byte, "short": np.short, "int": np.intc, "long": np.int_, "longlong": np.longlong,
            "uchar": np.ubyte, "ushort": np.ushort, "uint": np.uintc, "ulong": np.uint,
            "ulonglong": np.ulonglong, "float": np.single, "double": np.double}


def _table() -> dict[str, tuple[str, int]]:
    table = {f"{b}x{n}": (b, n) for b in _BASES for n in (1, 2, 3, 4)}
    for alias, ctype in _C_NAMES.items():
        for n in (1, 2, 3, 4):
            table[f"{alias}{n}"] = (np.dtype(ctype).name, n)
    return table


#: vector type name -> (base dtype name, components)
VECTOR_TYPES = _table()


def vector_type(base: str, n: int) -> Tuple:
    return Tuple(tuple(Scalar(base) for _ in range(n)), FIELDS[:n])


def is_vector(t: object) -> bool:
    return isinstance(t, Tuple) and t.fields is not None and t.fields == FIELDS[:len(t.items)] and bool(t.items)


class VectorLowering:
    """Mixed into ``FunctionLowering``."""

    def vector_make(self, name: str, node: ast.Call) -> N.Expr:
        base, n = VECTOR_TYPES[name]
        if node.keywords:
            raise self.error(node, f"cuda.{name}() takes its components as positional arguments")
        parts: list[N.Expr] = []
        for a in node.args:
            v = self.expr(a)
            if is_vector(v.type):
                parts.extend(N.TupleItem(v, k, type=t, line=node.lineno) for k, t in enumerate(v.type.items))
            elif isinstance(v.type, Scalar) and not v.type.is_complex:
                parts.append(v)
            else:
                raise self.error(a, f"cuda.{name}() is made of numbers and vector types, not a {v.type}")
        if len(parts) != n:
            raise self.error(node, f"cuda.{name} has {n} component{'s' if n != 1 else ''}; these arguments give "
                                   f"{len(parts)}", KernelCompileError)
        t = vector_type(base, n)
        items = [self.cast(p, Scalar(base)) for p in parts]
        return N.MakeTuple(items, type=t, line=node.lineno)
