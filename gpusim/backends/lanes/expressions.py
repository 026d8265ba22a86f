"""Lanes back end, expressions: each IR expression becomes the text of a Python expression over lane vectors.

A method may first emit statements (memory reads, calls, masks for the lanes that evaluate the right side
of ``and``/``or`` or one side of a conditional). Types are already decided, so operators are emitted as
plain NumPy operations; only what needs the run time goes through ``rt`` (memory, integer division by zero,
warp operations, FLOP counts). A GRID value is a NumPy scalar; any other value is a lane vector or, where it
is the same in every lane, a NumPy scalar (NumPy broadcasting makes both work).
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as N
from ...ir.nodes import Uni
from ...ir.types import CharSeq, Scalar
from ...runtime.libdevice import FLOPS as LIBDEVICE_FLOPS

_OPS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "lshift": "<<",
        "rshift": ">>", "and": "&", "or": "|", "xor": "^", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
        "eq": "==", "ne": "!="}
_FLOP = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "pow": "special"}
#: math intrinsics that are one NumPy ufunc on the (already converted) argument type
_UFUNCS = {"math.sqrt": "np.sqrt", "math.exp": "np.exp", "math.exp2": "np.exp2", "math.expm1": "np.expm1",
           "math.log": "np.log", "math.log2": "np.log2", "math.log10": "np.log10", "math.log1p": "np.log1p",
           "math.sin": "np.sin", "math.cos": "np.cos", "math.tan": "np.tan", "math.asin": "np.arcsin",
           "math.acos": "np.arccos", "math.atan": "np.arctan", "math.atan2": "np.arctan2", "math.sinh": "np.sinh",
           "math.cosh": "np.cosh", "math.tanh": "np.tanh", "math.asinh": "np.arcsinh", "math.acosh": "np.arccosh",
           "math.atanh": "np.arctanh", "math.pow": "np.power", "math.fabs": "np.fabs", "math.floor": "np.floor",
           "math.ceil": "np.ceil", "math.trunc": "np.trunc", "math.rint": "np.rint", "math.hypot": "np.hypot",
           "math.copysign": "np.copysign", "math.fmod": "np.fmod", "math.radians": "np.radians",
           "math.degrees": "np.degrees", "math.isnan": "np.isnan", "math.isinf": "np.isinf",
           "math.isfinite": "np.isfinite", "math.nextafter": "np.nextafter", "math.cbrt": "np.cbrt",
           "abs": "np.abs",
           "complex.real": "np.real", "complex.imag": "np.imag", "complex.conj": "np.conjugate"}
#: math intrinsics computed by ``gpusim.runtime.intrinsics`` (no single ufunc, or special values to keep)
_HELPERS = {"make_complex", "math.erf", "math.erfc", "math.gamma", "math.lgamma", "math.remainder", "math.ldexp",
            "math.frexp", "math.modf", "round", "round_ndigits", "popc", "clz", "ffs", "brev"}
#: math functions that are not floating-point work for FLOP counting
_NOT_FLOPS = {"math.fabs", "math.floor", "math.ceil", "math.trunc", "math.rint", "math.isnan", "math.isinf",
              "math.isfinite", "math.copysign", "math.frexp", "math.modf", "math.nextafter", "math.ldexp"}
#: nesting of generated expressions past which a value goes to a temporary (Python's parser has a limit)
MAX_NESTING = 24


class Ctx:
    """Where code is being generated: the current mask, whether assignments must merge, the enclosing loop."""

    def __init__(self, mask: str, partial: bool, loop: dict | None):
        self.mask = mask
        self.partial = partial
        self.loop = loop


def scalar(e: N.Expr) -> bool:
    """Is ``e`` kept as one NumPy scalar (the same value in every lane of the chunk)?"""
    return e.uni == Uni.GRID


class ExpressionGen:
    """Expression generation; needs ``emit``, ``tmp``, ``var``, ``const``, ``fn``, ``mod`` from ``FunctionGen``."""

    depth = 0

    def dtype(self, t: Scalar) -> str:
        return self.mod.dtype(t.dtype)

    def expr(self, e: N.Expr, ctx: Ctx) -> str:
        self.depth += 1
        try:
            code = self.expr_code(e, ctx)
        finally:
            self.depth -= 1
        if self.depth >= MAX_NESTING and not code.isidentifier():
            t = self.tmp()
            self.emit(f"{t} = {code}")
            return t
        return code

    def sub(self, ctx: Ctx, e: N.Expr) -> tuple[list[tuple[str, int]], str]:
        """Generate ``e`` into a separate buffer: (statements, expression)."""
        saved = self.out
        self.out = []
        try:
            code = self.expr(e, ctx)
            return self.out, code
        finally:
            self.out = saved

    def flop(self, op: str, code: str, t, ctx: Ctx) -> str:
        if self.instrument and isinstance(t, Scalar) and t.is_float:
            return f"rt.flop({op!r}, {code}, {ctx.mask})"
        return code

    def expr_code(self, e: N.Expr, ctx: Ctx) -> str:
        m = ctx.mask
        if isinstance(e, N.Const):
            return self.const(e.value, e.type)
        if isinstance(e, N.Var):
            return self.var(e.name)
        if isinstance(e, N.Special):
            return SPECIALS[e.name]
        if isinstance(e, N.Cast):
            return self.cast(e, ctx)
        if isinstance(e, N.Unary):
            x = self.expr(e.operand, ctx)
            if e.op == "not":
                return f"(~{x})"
            return f"(-{x})" if e.op == "neg" else f"(~{x})"
        if isinstance(e, N.Binary):
            return self.binary(e, ctx)
        if isinstance(e, N.Compare):
            return f"({self.expr(e.left, ctx)} {_OPS[e.op]} {self.expr(e.right, ctx)})"
        if isinstance(e, N.Logical):
            return self.logical(e, ctx)
        if isinstance(e, N.Select):
            return self.select(e, ctx)
        if isinstance(e, N.Let):
            value = self.expr(e.value, ctx)
            self.emit(f"{self.var(e.name)} = {value}")
            return self.expr(e.body, ctx)
        if isinstance(e, N.MakeTuple):
            return "(" + "".join(self.expr(i, ctx) + ", " for i in e.items) + ")"
        if isinstance(e, N.TupleItem):
            return f"{self.expr(e.value, ctx)}[{e.index}]"
        if isinstance(e, N.TupleIndex):
            t = self.tmp()
            self.emit(f"{t} = rt.tuple_index({self.expr(e.value, ctx)}, {self.expr(e.index, ctx)}, {m}, {e.line})")
            return t
        if isinstance(e, N.Trap) and e.raised is not None:
            self.emit(f"rt.raise_({e.message!r}, {self.mod.constant_object(e.raised)}, {m}, {e.line})")
            return self.const(0, e.type)
        if isinstance(e, N.Trap):
            self.emit(f"rt.trap({e.message!r}, {m}, {e.line})")
            return self.const(0, e.type)
        if isinstance(e, N.ConstArray):
            return self.mod.const_array(e)
        if isinstance(e, N.Load):
            return self.load(e, ctx)
        if isinstance(e, N.ArrayView):
            return self.view(e, ctx)
        if isinstance(e, N.Reinterpret):
            t = self.tmp()
            self.emit(f"{t} = rt.reinterpret({self.expr(e.array, ctx)}, {self.dtype(e.type.dtype)}, {ctx.mask}, "
                      f"{e.line}, {e.text!r})")
            return t
        if isinstance(e, N.Reshape):
            t = self.tmp()
            shape = "(" + "".join(self.expr(d, ctx) + ", " for d in e.shape) + ")"
            self.emit(f"{t} = rt.reshape({self.expr(e.array, ctx)}, {shape}, {ctx.mask}, {e.line}, {e.text!r})")
            return t
        if isinstance(e, N.FieldView):
            return f"rt.field({self.expr(e.array, ctx)}, {e.field!r})"
        if isinstance(e, N.ArrayShape):
            return f"{self.expr(e.array, ctx)}.shape[{e.dim}]"
        if isinstance(e, N.ArraySize):
            return f"{self.expr(e.array, ctx)}.size"
        if isinstance(e, N.Intrinsic):
            return self.intrinsic(e, ctx)
        if isinstance(e, N.Fma):
            a, b, c = (self.expr(x, ctx) for x in (e.a, e.b, e.c))
            fn = "rt.fma64" if e.type.bits == 64 else "rt.fma_narrow"
            code = f"{fn}({a}, {b}, {c})" if e.type.bits == 64 else f"{fn}({a}, {b}, {c}, {self.dtype(e.type)})"
            return self.flop("fma", code, e.type, ctx)
        if isinstance(e, N.Call):
            args = "".join(", " + self.expr(a, ctx) for a in e.args)
            t = self.tmp()
            self.emit(f"{t} = {self.mod.function(e.function)}(rt, {m}{args})")
            return t
        if isinstance(e, N.Atomic):
            arr = self.expr(e.array, ctx)
            idx = "(" + "".join(self.expr(i, ctx) + ", " for i in e.index) + ")"
            val = self.expr(e.value, ctx)
            cmp = self.expr(e.compare, ctx) if e.compare is not None else "None"
            t = self.tmp()
            self.emit(f"{t} = rt.atomic({e.op!r}, {arr}, {m}, {idx}, {val}, {cmp}, {e.result_used}, {e.line})")
            return t
        if isinstance(e, N.Shuffle):
            mask, val, lane = (self.expr(x, ctx) for x in (e.mask, e.value, e.lane))
            t = self.tmp()
            self.emit(f"{t} = rt.shuffle({e.kind!r}, {m}, {mask}, {val}, {lane}, {e.line})")
            return t
        if isinstance(e, N.Vote):
            mask, pred = self.expr(e.mask, ctx), self.expr(e.predicate, ctx)
            t = self.tmp()
            self.emit(f"{t} = rt.vote({e.kind!r}, {m}, {mask}, {pred}, {e.line})")
            return t
        if isinstance(e, N.Match):
            mask, val = self.expr(e.mask, ctx), self.expr(e.value, ctx)
            t = self.tmp()
            self.emit(f"{t} = rt.match({e.kind!r}, {m}, {mask}, {val}, {e.line})")
            return t
        if isinstance(e, N.ActiveMask):
            t = self.tmp()
            self.emit(f"{t} = rt.activemask({m}, {e.line})")
            return t
        if isinstance(e, N.BarrierReduce):
            pred = self.expr(e.predicate, ctx)
            t = self.tmp()
            self.emit(f"{t} = rt.syncthreads_reduce({e.op!r}, {m}, {pred}, {e.line})")
            return t
        raise TypeError(f"the lanes back end has no code for {type(e).__name__}")  # pragma: no cover

    # -- values ---------------------------------------------------------------------------------------------
    def cast(self, e: N.Cast, ctx: Ctx) -> str:
        reg = e.value
        if isinstance(reg, N.Var) and reg.name in self.registers:
            reg = self.registers[reg.name]
        if isinstance(reg, N.Special):  # a register converted: the same all chunk long, computed once
            e = N.Cast(reg, type=e.type, line=e.line)
            key = (reg.name, e.type.name)
            name = self.hoisted.get(key)
            if name is None:
                name = self.hoisted[key] = f"_h{len(self.hoisted)}"
                saved, self.out = self.out, []
                self.prologue.append((f"    {name} = {self.cast_code(e, ctx)}", self.fn.line))
                self.out = saved
            return name
        return self.cast_code(e, ctx)

    def cast_code(self, e: N.Cast, ctx: Ctx) -> str:
        x = self.expr(e.value, ctx)
        src, dst = e.value.type, e.type
        if isinstance(dst, CharSeq):  # truncated or padded with NULs, as NumPy converts S/U values
            return f"np.asarray({x}).astype({self.dtype(dst)})"
        if isinstance(dst, Scalar) and dst.is_bool:
            return f"({x} != 0)"
        if dst.is_int and src.is_float:
            return f"rt.convert({x}, {self.dtype(dst)})"
        return f"{self.mod.scalar_type(dst.dtype)}({x})"

    def binary(self, e: N.Binary, ctx: Ctx) -> str:
        a = self.expr(e.left, ctx)
        b = self.expr(e.right, ctx)
        t: Scalar = e.type
        op = e.op
        if op in ("floordiv", "mod") and t.is_int:
            r = e.right
            if isinstance(r, N.Const) and r.value != 0:
                return f"({a} {_OPS[op]} {b})"
            return f"rt.intdiv({a}, {b}, {op == 'mod'}, {ctx.mask}, {e.line})"
        if op == "pow":
            if t.is_int:
                return f"rt.ipow({a}, {b}, {ctx.mask}, {e.line})"
            if e.right.type.is_int:
                return self.flop("special", f"rt.fpow({a}, {b})", t, ctx)
            return self.flop("special", f"np.power({a}, {b})", t, ctx)
        code = f"({a} {_OPS[op]} {b})"
        if op in _FLOP:
            return self.flop(_FLOP[op], code, t, ctx)
        return code

    def intrinsic(self, e: N.Intrinsic, ctx: Ctx) -> str:
        args = [self.expr(a, ctx) for a in e.args]
        name = e.name
        if name in ("min", "max"):
            code = args[0]
            for a in args[1:]:
                code = f"np.{'minimum' if name == 'min' else 'maximum'}({code}, {a})"
            return code
        if name == "selp":
            return f"rt.select({args[0]}, {args[1]}, {args[2]})"
        if name in _UFUNCS:
            code = f"{_UFUNCS[name]}({', '.join(args)})"
        elif name.startswith("cmath."):  # CPython's cmath, element by element (its special values)
            code = f"ix.cmath_fn({name[6:]!r}, {self.dtype(e.type)}{''.join(', ' + a for a in args)})"
        elif name.startswith("np.") and isinstance(getattr(np, name[3:], None), np.ufunc):  # the ufunc's loop
            code = f"{name}({', '.join(args)})"
        elif name.startswith("libdevice."):  # gpusim.runtime.libdevice, in the declared types
            code = f"ld.{name[10:]}({', '.join(args)})"
            kind = LIBDEVICE_FLOPS.get(name[10:])
            return self.flop(kind, code, e.type, ctx) if kind else code
        elif name in _HELPERS:
            t = e.type if isinstance(e.type, Scalar) else e.args[0].type
            code = f"ix.{name.replace('math.', '')}({', '.join(args)}, {self.dtype(t)})"
        else:  # pragma: no cover
            raise TypeError(f"no code for intrinsic {name}")
        if name.startswith("math.") and name not in _NOT_FLOPS:
            return self.flop("special", code, e.args[0].type, ctx)
        return code

    def view(self, e: N.ArrayView, ctx: Ctx) -> str:
        arr = self.expr(e.array, ctx)
        parts = [self.expr(p, ctx) for p in e.parts]
        spec, k = [], 0
        for kind in e.kinds:
            if kind == "i":
                spec.append(f"('i', {parts[k]})")
                k += 1
                continue
            bounds = []
            for given in kind[1:]:
                bounds.append(parts[k] if given == "1" else "None")
                k += int(given)
            spec.append(f"('s', {', '.join(bounds)})")
        t = self.tmp()
        self.emit(f"{t} = rt.view({arr}, ({''.join(x + ', ' for x in spec)}), {ctx.mask}, {e.line}, {e.text!r})")
        return t

    def load(self, e: N.Load, ctx: Ctx) -> str:
        arr = self.expr(e.array, ctx)
        idx = "(" + "".join(self.expr(i, ctx) + ", " for i in e.index) + ")"
        t = self.tmp()
        if scalar(e):
            self.emit(f"{t} = rt.ld_uniform({arr}, {ctx.mask}, {idx}, {e.line})")
        else:
            self.emit(f"{t} = rt.ld({arr}, {ctx.mask}, {idx}, {e.line})")
        return t

    # -- short circuits -------------------------------------------------------------------------------------
    def logical(self, e: N.Logical, ctx: Ctx) -> str:
        """``a and b`` / ``a or b``: ``b`` evaluated only where ``a`` does not decide."""
        is_and = e.op == "and"
        left = self.expr(e.left, ctx)
        if scalar(e.left):
            stmts, right = self.sub(ctx, e.right)
            if not stmts and scalar(e.right):
                return f"({left} {e.op} {right})"
            res = self.tmp()
            self.emit(f"{res} = {left}")
            self.emit(f"if {'' if is_and else 'not '}{res}:")
            self.indent += 1
            self.out.extend(self.reindent(stmts))
            self.emit(f"{res} = {right}")
            self.indent -= 1
            return res
        c = self.tmp("_c")
        self.emit(f"{c} = {left} != 0" if e.type != _BOOL else f"{c} = {left}")
        m = self.tmp("_m")
        inner = Ctx(m, ctx.partial, ctx.loop)
        stmts, right = self.sub(inner, e.right)
        if stmts or m in right:
            self.emit(f"{m} = {ctx.mask} & {'' if is_and else '~'}{c}")
            self.out.extend(stmts)
        if e.type == _BOOL:
            return f"({c} {'&' if is_and else '|'} {right})"
        taken, kept = (right, left) if is_and else (left, right)
        return f"rt.select({c}, {taken}, {kept})"

    def select(self, e: N.Select, ctx: Ctx) -> str:
        cond = self.expr(e.cond, ctx)
        if scalar(e.cond):
            s1, a = self.sub(ctx, e.then)
            s2, b = self.sub(ctx, e.orelse)
            if not s1 and not s2:
                return f"({a} if {cond} else {b})"
            res = self.tmp()
            self.emit(f"if {cond}:")
            self.indent += 1
            self.out.extend(self.reindent(s1))
            self.emit(f"{res} = {a}")
            self.indent -= 1
            self.emit("else:")
            self.indent += 1
            self.out.extend(self.reindent(s2))
            self.emit(f"{res} = {b}")
            self.indent -= 1
            return res
        c = self.tmp("_c")
        self.emit(f"{c} = {cond}")
        mt, mf = self.tmp("_m"), self.tmp("_m")
        s1, a = self.sub(Ctx(mt, ctx.partial, ctx.loop), e.then)
        s2, b = self.sub(Ctx(mf, ctx.partial, ctx.loop), e.orelse)
        if s1 or mt in a:
            self.emit(f"{mt} = {ctx.mask} & {c}")
            self.out.extend(s1)
        if s2 or mf in b:
            self.emit(f"{mf} = {ctx.mask} & ~{c}")
            self.out.extend(s2)
        return f"rt.select({c}, {a}, {b})"


_BOOL = Scalar("bool")

#: special registers: the local names ``FunctionGen`` binds them to at the top of every function
SPECIALS = {"threadIdx.x": "_tx", "threadIdx.y": "_ty", "threadIdx.z": "_tz", "blockIdx.x": "_bx",
            "blockIdx.y": "_by", "blockIdx.z": "_bz", "blockDim.x": "_bdx", "blockDim.y": "_bdy",
            "blockDim.z": "_bdz", "gridDim.x": "_gdx", "gridDim.y": "_gdy", "gridDim.z": "_gdz",
            "laneid": "_lane", "warpsize": "_ws", "lanemask_lt": "rt.lanemask_lt"}
