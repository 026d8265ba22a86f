"""``for`` loops over what is not a ``range``: a 1-D array (its elements), a tuple of one item type,
``enumerate(...)`` and ``zip(...)`` of those, nested, with the target unpacked (``for i, (x, y) in
enumerate(zip(a, b))``), as numba-cuda iterates them.

Each iterable is a length and a way to get item ``k``; the loop is a counted ``ForRange`` over the positions
whose first statement assigns the target from the item at the position (``zip`` stops at its shortest input).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import INT64, Array, Scalar, Tuple, Type


@dataclass
class Source:
    length: N.Expr
    item: Callable[[N.Expr], N.Expr]
    type: Type


class IterationLowering:
    def iteration_source(self, node: ast.AST, pre: list[N.Stmt]) -> Source:
        line = node.lineno
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("enumerate", "zip") \
                and node.func.id not in self.locals and node.func.id not in self.globals:
            if node.keywords or (node.func.id == "enumerate" and len(node.args) != 1) or not node.args:
                want = "one iterable" if node.func.id == "enumerate" else "iterables"
                raise self.error(node, f"{node.func.id}() takes {want} in a kernel (no start or strict)",
                                 KernelCompileError)
            parts = [self.iteration_source(a, pre) for a in node.args]
            if node.func.id == "enumerate":
                src = parts[0]
                return Source(src.length, lambda k, src=src: N.MakeTuple(
                    [k, src.item(k)], type=Tuple((INT64, src.type)), line=line), Tuple((INT64, src.type)))
            length = parts[0].length
            for p in parts[1:]:
                length = N.Intrinsic("min", [length, p.length], type=INT64, line=line)
            t = Tuple(tuple(p.type for p in parts))
            return Source(length, lambda k: N.MakeTuple([p.item(k) for p in parts], type=t, line=line), t)
        value = self.expr(node)
        if not isinstance(value, (N.Var, N.Const, N.MakeTuple)):  # evaluated once, before the loop
            name = self.tmp()
            pre.append(N.Assign(name, value, line=line))
            self.env[name] = value.type
            value = N.Var(name, type=value.type, line=line)
        t = value.type
        if isinstance(t, Array):
            if t.ndim != 1:
                raise self.error(node, f"a loop over a {t.ndim}-d array is not supported in a kernel (it yields "
                                       "views): loop over range(a.shape[0])")
            return Source(N.ArrayShape(value, 0, type=INT64, line=line),
                          lambda k: N.Load(value, [k], type=t.dtype, line=line), t.dtype)
        if isinstance(t, Tuple) and t.uniform is not None:
            return Source(N.Const(len(t.items), type=INT64, line=line),
                          lambda k: N.TupleIndex(value, k, type=t.uniform, line=line), t.uniform)
        if isinstance(t, Tuple) and not t.items:
            return Source(N.Const(0, type=INT64, line=line), lambda k: k, INT64)
        what = "a tuple of items of several types (numba-cuda needs literal_unroll)" if isinstance(t, Tuple) else \
            f"a number ({t})" if isinstance(t, Scalar) else str(t)
        raise self.error(node, f"a kernel cannot loop over {what}")

    def iter_loop(self, s: ast.For) -> list[N.Stmt]:
        """``for target in iterable``: a counted loop over the iterable's positions."""
        pre: list[N.Stmt] = []
        src = self.iteration_source(s.iter, pre)
        line = s.lineno
        if not isinstance(src.length, (N.Const, N.Var)):
            n = self.tmp()
            pre.append(N.Assign(n, src.length, line=line))
            self.env[n] = INT64
            src.length = N.Var(n, type=INT64, line=line)
        pos = self.tmp()
        env0 = dict(self.env)
        header = dict(env0)
        header[pos] = INT64
        k = N.Var(pos, type=INT64, line=line)

        def head():
            return self.assign_value(s.target, src.item(k), line)

        picks, body, header, ctx = self.loop_body(header, head, s.body, line)
        self.close_loop(body, header, ctx, line)
        pre.extend(self.entry_casts(env0, header, line))
        trip = src.length.value if isinstance(src.length, N.Const) else None
        loop = N.ForRange(pos, N.Const(0, type=INT64, line=line), src.length, N.Const(1, type=INT64, line=line),
                          list(picks) + body, trip, line=line)
        self.env, self.live = header, True
        return pre + [loop]
