"""``isinstance(x, classes)`` in a kernel, decided at compile time on ``x``'s static type, as numba-cuda's
``isinstance`` overload decides it: the call becomes the constant True or False, and an ``if`` on it compiles
only the branch taken (``FunctionLowering.if_stmt``), so ``if isinstance(b, tuple): b = b[0]`` types.

numba's rule is type equality with the class's numba type: ``int`` is int64, ``float`` float64, ``complex``
complex128, ``bool`` boolean, ``np.int32`` / ``numba.int32`` int32 (an int32 value is not an ``int``);
``tuple`` is any tuple. Like numba, an Optional value and types outside its list are refused rather than
answered False.
"""

from __future__ import annotations

import ast

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import (
    BOOL,
    COMPLEX128,
    FLOAT64,
    INT64,
    NONE,
    Array,
    CharSeq,
    Optional,
    RecordRef,
    Scalar,
    Tuple,
    Type,
)
from .names import BuiltinRef, DTypeRef

#: the builtin classes ``isinstance`` compares with, as the IR type numba gives each (``tuple``: any tuple)
_BUILTIN_TYPES = {"int": INT64, "float": FLOAT64, "complex": COMPLEX128, "bool": BOOL}


class InstanceCheckLowering:
    def isinstance_call(self, node: ast.Call) -> N.Const:
        if len(node.args) != 2 or node.keywords:
            raise self.error(node, "isinstance() takes two arguments: a value and a class or a tuple of classes",
                             KernelCompileError)
        value = self.expr(node.args[0])
        t = value.type
        if isinstance(t, Optional):
            raise self.error(node, f"isinstance cannot handle optional types (found {t}), as in numba-cuda",
                             KernelCompileError)
        if isinstance(t, RecordRef) or not isinstance(t, (Scalar, Tuple, Array, CharSeq, type(NONE))):
            raise self.error(node, f"isinstance() does not support values of type {t} (numba-cuda's rule)",
                             KernelCompileError)
        spec = node.args[1]
        classes = spec.elts if isinstance(spec, ast.Tuple) else [spec]
        answer = any(self.is_instance(t, c) for c in classes)
        return N.Const(answer, type=BOOL, line=node.lineno)

    def is_instance(self, t: Type, cls: ast.AST) -> bool:
        ref = self.resolve(cls)
        if isinstance(ref, BuiltinRef) and ref.name == "tuple":
            return isinstance(t, Tuple) and not isinstance(t, RecordRef)
        if isinstance(ref, BuiltinRef) and ref.name in _BUILTIN_TYPES:
            return t == _BUILTIN_TYPES[ref.name]
        if isinstance(ref, DTypeRef):
            return isinstance(t, Scalar) and t.dtype == ref.dtype
        raise self.error(cls, f"isinstance() in a kernel checks against int, float, complex, bool, tuple and "
                              f"NumPy or numba scalar types, not {ast.unparse(cls)}")
