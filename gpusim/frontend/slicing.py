"""Slicing arrays in kernels, as numba-cuda types it: ``a[1:]``, ``a[i, :]``, ``a[::-1]``, ``a[i]`` of a 2-D
array (a row), each a view sharing the array's memory (``ArrayView``, layout "A"), which a local can hold, a
device function can take and an atomic can update; and assignment to a slice (``a[2:5] = x``: a number, or
an array of the view's rank, element by element).
"""

from __future__ import annotations

import ast

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import INT64, Array, Scalar


class SliceLowering:
    def is_view_index(self, node: ast.Subscript, t: Array) -> bool:
        """Does ``array[node.slice]`` make a view (a slice in it, or fewer indices than dimensions)?"""
        sl = node.slice
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if any(isinstance(i, ast.Slice) for i in items):
            return True
        if len(items) >= t.ndim:
            return False
        # a[i] of a 2-D array is its row; a[t] with t a tuple (cuda.grid(2), a variable) is one element
        return len(items) > 1 or isinstance(self.expr(sl).type, Scalar)

    def array_view(self, base: N.Expr, node: ast.Subscript) -> N.Expr:
        t: Array = base.type
        sl = node.slice
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        line = node.lineno
        if len(items) > t.ndim:
            raise self.error(node, f"{ast.unparse(node.value)} has {t.ndim} dimension{'s' if t.ndim != 1 else ''} "
                                   f"but is indexed with {len(items)}", KernelCompileError)
        parts: list[N.Expr] = []
        kinds: list[str] = []
        for it in items:
            if isinstance(it, ast.Slice):
                flags = ""
                for bound in (it.lower, it.upper, it.step):
                    if bound is None or (isinstance(bound, ast.Constant) and bound.value is None):
                        flags += "0"
                        continue
                    parts.append(self.view_int(bound, "a slice bound"))
                    flags += "1"
                kinds.append("s" + flags)
            else:
                parts.append(self.view_int(it, "an array index"))
                kinds.append("i")
        kinds.extend("s000" for _ in range(t.ndim - len(items)))
        kept = sum(k != "i" for k in kinds)
        return N.ArrayView(base, parts, tuple(kinds), ast.unparse(node), type=Array(t.dtype, kept, "A", t.space),
                           line=line)

    def view_int(self, node: ast.AST, what: str) -> N.Expr:
        e = self.expr(node)
        if not (isinstance(e.type, Scalar) and (e.type.is_int or e.type.is_bool)):
            raise self.error(node, f"{what} must be an integer, not {e.type}", KernelCompileError)
        return self.cast(e, INT64)

    def slice_store(self, view: N.Expr, value: N.Expr, node: ast.AST, line: int) -> list[N.Stmt]:
        """``a[2:5] = x``: every element of the view set from a number, or from an array of the view's rank
        (read at the same position: numba requires the shapes to match)."""
        t: Array = view.type
        if t.space == "const":
            raise self.error(node, f"{ast.unparse(node)} is part of a constant array: it cannot be written")
        if isinstance(value.type, Array):
            if value.type.ndim != t.ndim:
                raise self.error(node, f"cannot assign a {value.type.ndim}-d array to a {t.ndim}-d slice",
                                 KernelCompileError)
        elif not isinstance(value.type, Scalar):
            raise self.error(node, f"cannot assign a {value.type} to a slice", KernelCompileError)
        out: list[N.Stmt] = []
        view = self.once(view, out, line)
        value = self.once(value, out, line)
        ks = [N.Var(self.tmp(), type=INT64, line=line) for _ in range(t.ndim)]
        if isinstance(value.type, Array):
            src = N.Load(value, list(ks), type=value.type.dtype, line=line)
        else:
            src = value
        body: list[N.Stmt] = [N.Store(view, list(ks), self.cast(src, t.dtype), line=line)]
        zero, one = N.Const(0, type=INT64, line=line), N.Const(1, type=INT64, line=line)
        for d in reversed(range(t.ndim)):
            stop = N.ArrayShape(view, d, type=INT64, line=line)
            # the counter is set before its loop: the view's length may differ per thread
            body = [N.Assign(ks[d].name, zero, line=line), N.ForRange(ks[d].name, zero, stop, one, body, line=line)]
        return out + body
