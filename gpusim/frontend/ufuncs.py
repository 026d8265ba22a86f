"""NumPy ufuncs in kernels: ``np.sin(x)`` of numbers, and ``np.sin(a, out)`` over whole arrays.

numba-cuda compiles a ufunc called on numbers to the scalar loop NumPy would pick, and one called with an output
array to a loop over the output's elements, every input an array of the output's shape or a number (one
thread does the whole array). The loop is the one NumPy's type resolution picks for the input dtypes (float16
loops, which numba-cuda lacks, become float32 ones); the result is converted to the output array's type.

The lowering builds that loop nest in the IR: ``ForRange`` per dimension of the output, loads of the inputs at
the same index, an ``Intrinsic("np.<ufunc>")`` that back ends compute with the ufunc itself, and a store.
"""

from __future__ import annotations

import ast

import numpy as np

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import FLOAT16, FLOAT32, INT64, Array, Scalar, Type, scalar

#: the ufuncs a kernel may call (numba-cuda's ufunc_db, less the ones with several outputs)
UFUNCS = frozenset("""
    sin cos tan arcsin arccos arctan arctan2 hypot sinh cosh tanh arcsinh arccosh arctanh deg2rad rad2deg
    degrees radians exp exp2 expm1 log log2 log10 log1p sqrt square cbrt reciprocal negative positive absolute
    fabs sign conjugate rint floor ceil trunc add subtract multiply divide true_divide floor_divide remainder mod
    fmod power float_power equal not_equal less less_equal greater greater_equal logical_and logical_or
    logical_xor logical_not bitwise_and bitwise_or bitwise_xor invert bitwise_not left_shift right_shift maximum
    minimum fmax fmin isnan isinf isfinite signbit copysign nextafter logaddexp logaddexp2
""".split())


class UfuncLowering:
    def ufunc_loop(self, name: str, ins: list[Type], node: ast.AST) -> tuple[list[Scalar], Scalar]:
        """The input and output types of the loop NumPy picks for ``ins``."""
        uf = getattr(np, name)
        try:
            dts = uf.resolve_dtypes(tuple(t.dtype for t in ins) + (None,) * uf.nout)
        except (TypeError, ValueError):  # no loop takes these types (NumPy's errors derive from TypeError)
            raise self.error(node, f"numba-cuda has no np.{name} loop for {', '.join(str(t) for t in ins)}",
                             KernelCompileError) from None
        half = any(t == FLOAT16 for t in ins)
        loop = [FLOAT32 if (d.kind == "f" and d.itemsize == 2 and not half) else scalar(d) for d in dts]
        return loop[:uf.nin], loop[uf.nin]

    def ufunc_value(self, name: str, values: list[N.Expr], node: ast.AST) -> N.Expr:
        ins, out = self.ufunc_loop(name, [v.type for v in values], node)
        return N.Intrinsic(f"np.{name}", [self.cast(v, t) for v, t in zip(values, ins)], type=out, line=node.lineno)

    def ufunc_call(self, name: str, node: ast.Call) -> N.Expr | list[N.Stmt]:
        """``np.<name>(...)``: a value for numbers only, a loop (statements) with an output array."""
        uf = getattr(np, name)
        if node.keywords:
            raise self.error(node, f"np.{name}() takes no keyword arguments in a kernel", KernelCompileError)
        values = [self.expr(a) for a in node.args]
        if len(values) not in (uf.nin, uf.nin + uf.nout) or uf.nout != 1:
            raise self.error(node, f"np.{name}() takes {uf.nin} inputs and optionally 1 output array, "
                                   f"{len(values)} given", KernelCompileError)
        for v in values[:uf.nin]:
            if not isinstance(v.type, (Scalar, Array)):
                raise self.error(node, f"np.{name}() of a {v.type} is not supported in a kernel")
        if len(values) == uf.nin:
            if any(isinstance(v.type, Array) for v in values):
                raise self.error(node, f"np.{name}() of an array needs an output array in a kernel (numba-cuda "
                                       "cannot allocate one): pass it as the last argument", KernelCompileError)
            return self.ufunc_value(name, values, node)
        return self.ufunc_into(name, values[:uf.nin], values[-1], node)

    def ufunc_into(self, name: str, ins: list[N.Expr], out: N.Expr, node: ast.AST) -> list[N.Stmt]:
        line = node.lineno
        if not isinstance(out.type, Array) or out.type.space == "const":
            raise self.error(node, f"the output of np.{name}() must be a writable array, not {out.type}")
        nd = out.type.ndim
        pre: list[N.Stmt] = []
        for e in [*ins, out]:
            if isinstance(e.type, Array) and e.type.ndim != nd:
                raise self.error(node, f"np.{name}(): every array must have the output's {nd} dimensions "
                                       f"(broadcasting is not supported in a kernel), not {e.type.ndim}")
        *ins, out = [self.once(e, pre, line) for e in [*ins, out]]  # each evaluated once, before the loop
        idx_names = [self.tmp() for _ in range(nd)]
        idx = [N.Var(n, type=INT64, line=line) for n in idx_names]
        elems = [N.Load(e, list(idx), type=e.type.dtype, line=line) if isinstance(e.type, Array) else e for e in ins]
        value = self.ufunc_value(name, elems, node)
        body: list[N.Stmt] = [N.Store(out, list(idx), self.cast(value, out.type.dtype), line=line)]
        for d in reversed(range(nd)):
            stop = N.ArrayShape(out, d, type=INT64, line=line)
            body = [N.ForRange(idx_names[d], N.Const(0, type=INT64, line=line), stop,
                               N.Const(1, type=INT64, line=line), body, None, line=line)]
        for n in idx_names:
            self.env[n] = INT64
        return pre + body
