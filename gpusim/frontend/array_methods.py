"""NumPy arrays made and reshaped in kernels, as numba-cuda compiles them: ``np.empty/zeros/ones(shape,
dtype)`` with a constant shape and ``a.copy()`` of an array whose shape is known at compile time (a module
array) are arrays of each thread's own (numba-cuda's NRT allocates them per thread; gpusim holds them as local
arrays, so reading an element of ``np.empty`` never written is an ``UninitializedRead``); ``a.reshape(shape)``
is a view of the same elements in a new shape (``Reshape``).
"""

from __future__ import annotations

import ast
import itertools

import numpy as np

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import INT64, Array, Scalar, Tuple
from .names import OtherRef

#: elements a made array is filled or copied with, one store each, at most
MAX_FILLED = 4096
_MAKERS = {"empty": None, "zeros": 0, "ones": 1}


class ArrayMethodLowering:
    def array_alloc(self, value: ast.AST, target: ast.Name) -> tuple[list[N.Stmt], Array] | None:
        """``x = np.empty(...)`` / ``np.zeros`` / ``np.ones`` / ``x = a.copy()``: the statements and the type."""
        if not isinstance(value, ast.Call):
            return None
        f = value.func
        ref = self.resolve(f) if isinstance(f, (ast.Name, ast.Attribute)) else None
        if isinstance(ref, OtherRef) and ref.module == "numpy" and ref.attr in _MAKERS:
            return self.numpy_alloc(ref.attr, value, target)
        if isinstance(f, ast.Attribute) and f.attr == "copy" and ref is None and not value.args \
                and not value.keywords:
            src = self.expr(f.value)
            if isinstance(src.type, Array):
                return self.array_copy(src, value, target)
        return None

    def numpy_alloc(self, name: str, node: ast.Call, target: ast.Name) -> tuple[list[N.Stmt], Array]:
        args = list(node.args) + [k.value for k in node.keywords if k.arg in ("shape", "dtype")]
        if not 1 <= len(args) <= 2 or any(k.arg not in ("shape", "dtype") for k in node.keywords):
            raise self.error(node, f"np.{name}(shape, dtype) takes a shape and a dtype in a kernel", KernelCompileError)
        if isinstance(args[0], ast.Tuple):
            shape = tuple(self.const_value(e) for e in args[0].elts)
        else:
            shape = self.const_value(args[0], tuples=True)
        if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
            shape = (int(shape),)
        if not (isinstance(shape, tuple) and all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                                                 and d >= 0 for d in shape)):
            raise self.error(node, f"the shape of np.{name} must be a constant in a kernel (numba-cuda needs it to "
                                   "allocate the array)")
        dtype = np.dtype(np.float64) if len(args) < 2 else self.dtype_value(args[1])
        if dtype is None:
            raise self.error(args[1], f"{ast.unparse(args[1])} is not a dtype")
        st = self.kernel_scalar(dtype, node)
        line = node.lineno
        decl = N.LocalDecl(target.id, target.id, tuple(int(d) for d in shape), st, self.builder.new_decl(), line=line)
        t = Array(st, len(shape), "C", "local")
        out: list[N.Stmt] = [decl]
        fill = _MAKERS[name]
        if fill is not None:
            var = N.Var(target.id, type=t, line=line)
            out.extend(self.each_element(shape, node, lambda k: N.Store(var, k, self.cast(
                N.Const(fill, type=INT64, line=line), st), line=line)))
        return out, t

    def array_copy(self, src: N.Expr, node: ast.Call, target: ast.Name) -> tuple[list[N.Stmt], Array]:
        if not isinstance(src, N.ConstArray) or not isinstance(src.type.dtype, Scalar):
            raise self.error(node, "a kernel copies (.copy()) only arrays whose shape is known when it is compiled "
                                   "(a module-level array): write the loop")
        line = node.lineno
        shape = tuple(int(d) for d in src.data.shape)
        st = src.type.dtype
        t = Array(st, len(shape), "C", "local")
        out: list[N.Stmt] = [N.LocalDecl(target.id, target.id, shape, st, self.builder.new_decl(), line=line)]
        var = N.Var(target.id, type=t, line=line)
        out.extend(self.each_element(shape, node, lambda k: N.Store(
            var, k, N.Load(src, list(k), type=st, line=line), line=line)))
        return out, t

    def each_element(self, shape: tuple[int, ...], node: ast.AST, make) -> list[N.Stmt]:
        """``make(index)`` for every index of ``shape``, in row-major order (one statement per element: a whole
        array filled or copied at once)."""
        count = 1
        for d in shape:
            count *= d
        if count > MAX_FILLED:
            raise self.error(node, f"an array of {count} elements is filled or copied whole in a kernel (gpusim "
                                   f"writes at most {MAX_FILLED} this way): write the loop")
        line = node.lineno
        return [make([N.Const(p, type=INT64, line=line) for p in pos])
                for pos in itertools.product(*(range(d) for d in shape))]

    def reinterpret(self, node: ast.Call) -> N.Expr:
        """``a.view(dtype)``: the bytes of ``a`` as elements of another number type."""
        base = self.expr(node.func.value)
        if not isinstance(base.type, Array) or not isinstance(base.type.dtype, Scalar):
            raise self.error(node, f"view() of a {base.type} is not supported in a kernel")
        if len(node.args) != 1 or node.keywords:
            raise self.error(node, "view() takes one dtype in a kernel", KernelCompileError)
        dtype = self.dtype_value(node.args[0])
        if dtype is None:
            raise self.error(node.args[0], f"{ast.unparse(node.args[0])} is not a dtype")
        st = self.kernel_scalar(dtype, node)
        t = base.type
        return N.Reinterpret(base, ast.unparse(node), type=Array(st, t.ndim, "A", t.space), line=node.lineno)

    # -- reshape ---------------------------------------------------------------------------------------------------
    def reshape(self, node: ast.Call) -> N.Expr:
        """``a.reshape(shape)`` / ``a.reshape(d0, d1, ...)``: a C-ordered view of ``a``'s elements (``a`` must be
        contiguous; one dimension may be -1)."""
        base = self.expr(node.func.value)
        if not isinstance(base.type, Array):
            raise self.error(node, f"reshape() of a {base.type} is not supported in a kernel")
        if node.keywords or not node.args:
            raise self.error(node, "reshape() takes the new shape in a kernel", KernelCompileError)
        dims: list[N.Expr] = []
        values = [self.expr(a) for a in node.args]
        if len(values) == 1 and isinstance(values[0].type, Tuple):
            t = values[0]
            dims = list(t.items) if isinstance(t, N.MakeTuple) else [
                N.TupleItem(t, k, type=it, line=node.lineno) for k, it in enumerate(t.type.items)]
        else:
            dims = values
        out = []
        for d in dims:
            if not (isinstance(d.type, Scalar) and d.type.is_int):
                raise self.error(node, f"a shape must be integers, not {d.type}", KernelCompileError)
            out.append(self.cast(d, INT64))
        t = base.type
        return N.Reshape(base, out, ast.unparse(node), type=Array(t.dtype, len(out), "C", t.space), line=node.lineno)
