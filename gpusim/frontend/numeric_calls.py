"""Calls on numbers beyond the builtins and ``math``: ``cuda.fp16``'s half-precision intrinsics, ``cmath``,
``z.conjugate()``, ``x.bit_count()``, and the ``operator`` module's functions, each typed as numba-cuda types it."""

from __future__ import annotations

import ast

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import BOOL, FLOAT16, FLOAT32, Scalar
from . import typing as ty
from .names import OPERATOR_BINARY, OPERATOR_UNARY

#: cuda.fp16's half-precision operations (numba-cuda's ``__half`` bindings: every argument converted to float16,
#: the result a float16, or a bool for the comparisons): name -> (arity, how gpusim computes it)
FP16_BINARY = {"hadd": "add", "hsub": "sub", "hmul": "mul", "hdiv": "truediv"}
FP16_COMPARE = {"heq": "eq", "hne": "ne", "hge": "ge", "hgt": "gt", "hle": "le", "hlt": "lt"}
#: one-argument functions, computed in float32 and rounded to float16 once
FP16_MATH = {"hsin": "math.sin", "hcos": "math.cos", "hlog": "math.log", "hlog2": "math.log2",
             "hlog10": "math.log10", "hexp": "math.exp", "hexp2": "math.exp2", "hsqrt": "math.sqrt",
             "hceil": "math.ceil", "hfloor": "math.floor", "htrunc": "math.trunc", "hrint": "math.rint"}
FP16_OTHER = {"hneg": 1, "habs": 1, "hrcp": 1, "hrsqrt": 1, "hexp10": 1, "hfma": 3, "hmax": 2, "hmin": 2}
FP16_ARITY = {**dict.fromkeys(FP16_BINARY, 2), **dict.fromkeys(FP16_COMPARE, 2), **dict.fromkeys(FP16_MATH, 1),
              **FP16_OTHER}


class NumericCallLowering:
    def conjugate(self, node: ast.Call) -> N.Expr:
        """``z.conjugate()``: of a complex number, its conjugate; of a real number, the number (numba)."""
        z = self.expr(node.func.value)
        if not isinstance(z.type, Scalar):
            raise self.error(node, f"a {z.type} has no .conjugate() in a kernel", KernelCompileError)
        if not z.type.is_complex:
            return z
        return N.Intrinsic("complex.conj", [z], type=z.type, line=node.lineno)

    def cmath_call(self, name: str, node: ast.Call) -> N.Expr:
        """``cmath.<name>(...)``: numba's cmath, complex in (real numbers converted), complex out."""
        line = node.lineno
        args = self.plain_args(f"cmath.{name}", node)
        for a in args:
            if not isinstance(a.type, Scalar):
                raise self.error(node, f"cmath.{name}() of a {a.type} is not supported in a kernel")
        sig = ty.cmath_call(name, tuple(a.type for a in args))
        if sig is None:
            raise self.error(node, f"numba-cuda has no cmath.{name} for {', '.join(str(a.type) for a in args)}",
                             KernelCompileError)
        args = [self.cast(a, t) for a, t in zip(args, sig.args)]
        if name == "log" and len(args) == 2:
            logs = [N.Intrinsic("cmath.log", [a], type=sig.ret, line=line) for a in args]
            return N.Binary("truediv", logs[0], logs[1], type=sig.ret, line=line)
        if name == "polar":  # (abs(z), phase(z))
            v = self.tmp()
            z = N.Var(v, type=args[0].type, line=line)
            r, phi = sig.ret.items
            pair = N.MakeTuple([N.Intrinsic("abs", [z], type=r, line=line),
                                N.Intrinsic("cmath.phase", [z], type=phi, line=line)], type=sig.ret, line=line)
            return N.Let(v, args[0], pair, type=sig.ret, line=line)
        return N.Intrinsic(f"cmath.{name}", args, type=sig.ret, line=line)

    def bit_count(self, node: ast.Call) -> N.Expr:
        """``x.bit_count()`` of an integer: its set bits (numba-cuda lowers it to ``popc``)."""
        x = self.expr(node.func.value)
        sig = ty.cuda_call("popc", (x.type,)) if isinstance(x.type, Scalar) and x.type.is_int else None
        if sig is None:
            raise self.error(node, f"a {x.type} has no .bit_count() in a kernel (integers have)", KernelCompileError)
        return N.Intrinsic("popc", [self.cast(x, sig.args[0])], type=sig.ret, line=node.lineno)

    def fp16_call(self, name: str, values: list[N.Expr], node: ast.Call) -> N.Expr:
        """``cuda.fp16.h*``: float16 arithmetic, comparisons and math."""
        line = node.lineno
        for v in values:
            if not isinstance(v.type, Scalar):
                raise self.error(node, f"cuda.fp16.{name} takes float16 numbers, not {v.type}", KernelCompileError)
        h = [self.cast(v, FLOAT16) for v in values]
        if name in FP16_BINARY:
            return N.Binary(FP16_BINARY[name], h[0], h[1], type=FLOAT16, line=line)
        if name in FP16_COMPARE:
            return N.Compare(FP16_COMPARE[name], h[0], h[1], type=BOOL, line=line)
        if name == "hneg":
            return N.Unary("neg", h[0], type=FLOAT16, line=line)
        if name == "habs":
            return N.Intrinsic("math.fabs", h, type=FLOAT16, line=line)
        if name == "hfma":  # one rounding, to float16
            return N.Fma(*h, type=FLOAT16, line=line)
        if name in ("hmax", "hmin"):  # the other operand where one is NaN (CUDA's __hmax/__hmin)
            a, b = self.tmp(), self.tmp()
            va, vb = N.Var(a, type=FLOAT16, line=line), N.Var(b, type=FLOAT16, line=line)
            wins = N.Compare("gt" if name == "hmax" else "lt", va, vb, type=BOOL, line=line)
            keep_a = N.Logical("or", wins, N.Intrinsic("math.isnan", [vb], type=BOOL, line=line), type=BOOL,
                               line=line)
            pick = N.Select(keep_a, va, vb, type=FLOAT16, line=line)
            return N.Let(a, h[0], N.Let(b, h[1], pick, type=FLOAT16, line=line), type=FLOAT16, line=line)
        x = self.cast(h[0], FLOAT32)
        one = N.Const(1.0, type=FLOAT32, line=line)
        if name in FP16_MATH:
            r = N.Intrinsic(FP16_MATH[name], [x], type=FLOAT32, line=line)
        elif name == "hrcp":
            r = N.Binary("truediv", one, x, type=FLOAT32, line=line)
        elif name == "hrsqrt":
            r = N.Binary("truediv", one, N.Intrinsic("math.sqrt", [x], type=FLOAT32, line=line), type=FLOAT32,
                         line=line)
        else:  # hexp10
            r = N.Binary("pow", N.Const(10.0, type=FLOAT32, line=line), x, type=FLOAT32, line=line)
        return N.Cast(r, type=FLOAT16, line=line)

    def operator_call(self, name: str, node: ast.Call) -> N.Expr:
        """``operator.add(a, b)``: the operator itself, as numba-cuda types it."""
        unary = name in OPERATOR_UNARY
        want = 1 if unary else 2
        if node.keywords or len(node.args) != want:
            raise self.error(node, f"operator.{name}() takes {want} positional argument{'s' if want > 1 else ''}",
                             KernelCompileError)
        if unary:
            op = {"neg": ast.USub(), "pos": ast.UAdd(), "invert": ast.Invert(), "not": ast.Not()}[OPERATOR_UNARY[name]]
            return self.unary(ast.copy_location(ast.UnaryOp(op, node.args[0]), node))
        return self.binary(OPERATOR_BINARY[name], self.expr(node.args[0]), self.expr(node.args[1]), node)

