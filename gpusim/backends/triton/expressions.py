"""Triton back end, expressions: each IR expression becomes a ``Val`` (the text of a Triton expression).

A method may first emit statements (loads, atomics, warp exchanges, inlined device functions). Types are the
IR's: operands already have the result's type, so operators are written plainly, and only what Triton
spells differently from numba-cuda goes through a helper (Python's floor division, bit-exact selection).

* Scalars and vectors: a value whose operands are all scalars is a scalar of the program (one CUDA block),
  else a ``[lanes]`` tensor; Triton broadcasts a scalar operand against a vector one.
* Memory: a load touches only the active lanes (``mask=``); a load at a block-uniform address is one scalar
  load (masked by "any lane active" where some lanes are not).
* Math: division is IEEE (``tl.div_rn``), square roots ``tl.sqrt_rn``, fused multiply-adds ``tl.fma`` (only
  where the IR has an ``Fma``: the program is compiled with fp fusion off), other functions libdevice's, the
  same functions numba-cuda calls.
"""

from __future__ import annotations

import numpy as np

from ...device import WARP_SIZE
from ...ir import nodes as N
from ...ir.types import BOOL, INT32, INT64, Array, Scalar, Tuple
from ...ir.values import convert, python_value
from .values import BITS_OF, Affine, ArrayRef, Val, tl_type

_OPS = {"add": "+", "sub": "-", "mul": "*", "lshift": "<<", "rshift": ">>", "and": "&", "or": "|", "xor": "^",
        "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
#: math intrinsics that are one libdevice function of the same name (in the argument's type)
_LIBDEVICE = {"math.exp": "exp", "math.exp2": "exp2", "math.expm1": "expm1", "math.log": "log", "math.log2": "log2",
              "math.log10": "log10", "math.log1p": "log1p", "math.sin": "sin", "math.cos": "cos", "math.tan": "tan",
              "math.asin": "asin", "math.acos": "acos", "math.atan": "atan", "math.atan2": "atan2",
              "math.sinh": "sinh", "math.cosh": "cosh", "math.tanh": "tanh", "math.asinh": "asinh",
              "math.acosh": "acosh", "math.atanh": "atanh", "math.pow": "pow", "math.erf": "erf",
              "math.erfc": "erfc", "math.lgamma": "lgamma", "math.gamma": "tgamma", "math.hypot": "hypot",
              "math.copysign": "copysign", "math.fmod": "fmod", "math.cbrt": "cbrt", "math.trunc": "trunc",
              "math.nextafter": "nextafter", "math.remainder": "remainder"}
_PLAIN_MATH = {"math.fabs": "tl.abs", "math.floor": "tl.floor", "math.ceil": "tl.ceil", "abs": "tl.abs"}
_SPECIAL_CODE = {"threadIdx.x": "_tx", "threadIdx.y": "_ty", "threadIdx.z": "_tz", "blockIdx.x": "_bx",
                 "blockIdx.y": "_by", "blockIdx.z": "_bz", "gridDim.x": "_gdx", "gridDim.y": "_gdy",
                 "gridDim.z": "_gdz"}


_FOLD = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
         "and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y}


def _wrap(r: int, t: Scalar):
    """The integer ``r`` in the type ``t``, wrapped as the GPU wraps it."""
    bits = t.bits
    r &= (1 << bits) - 1
    if t.signed and r >= 1 << (bits - 1):
        r -= 1 << bits
    return r


def literal(value, t: Scalar) -> Val:
    value = python_value(value)
    if t.is_bool:
        value = bool(value)
    elif t.is_int:
        value = int(value)
    else:
        value = float(value)
    code = repr(value)
    if isinstance(value, float) and not np.isfinite(value):
        code = f"float({str(value)!r})"
    aff = Affine(c=value) if t.is_int else None
    return Val(code, t, lit=True, value=value, affine=aff)


def typed(v: Val) -> str:
    """``v`` as a value of its own type (a literal becomes a typed scalar)."""
    if not v.lit:
        return v.code
    return f"tl.full((), {v.code}, {tl_type(v.scalar_type)})"


def operand(v: Val, other: Val) -> str:
    """``v`` as an operand of an operator whose other operand is ``other`` (both of one type): a literal stays
    bare where Triton keeps the other operand's type exactly (integers, bools, float32 and float16 values the
    type holds), else it is typed."""
    if not v.lit:
        return v.code
    t = v.scalar_type
    if other.lit or (t.is_float and t.bits == 64):
        return typed(v)
    return v.code


class ExpressionGen:
    """Expression generation; ``FunctionGen`` (``codegen.py``) supplies the statement side: ``emit``,
    ``tmp``, ``sub``, ``local``, ``array_of``, ``fail``, the lane count ``P`` and the block's shape."""

    # -- entry ------------------------------------------------------------------------------------------------
    def expr(self, e: N.Expr, ctx) -> Val:
        method = getattr(self, "x_" + type(e).__name__, None)
        if method is None:
            raise self.fail(e.line, f"{type(e).__name__} has no Triton translation")
        return method(e, ctx)

    def value(self, e: N.Expr, ctx) -> Val:
        """A value kept in a temporary when its text is long (so that it is computed once)."""
        v = self.expr(e, ctx)
        if v.lit or v.items is not None or v.array is not None or v.code.isidentifier():
            return v
        name = self.tmp()
        self.emit(f"{name} = {v.code}")
        return Val(name, v.type, vec=v.vec, affine=v.affine, pure=v.pure)

    # -- leaves -----------------------------------------------------------------------------------------------
    def x_Const(self, e: N.Const, ctx) -> Val:
        return literal(e.value, e.type)

    def x_Var(self, e: N.Var, ctx) -> Val:
        return self.local(e.name, e.type, e.line)

    def x_Special(self, e: N.Special, ctx) -> Val:
        name = e.name
        if name.startswith("blockDim."):
            return literal(self.block_shape[" xyz".index(name[-1]) - 1], INT32)
        if name == "warpsize":
            return literal(WARP_SIZE, INT32)
        if name == "laneid":
            self.uses.add("laneid")
            return Val("_laneid", INT32, vec=True)
        if name == "lanemask_lt":
            self.uses.add("laneid")
            return Val("((1 << _laneid) - 1).to(tl.uint32)", e.type, vec=True)
        aff = {"threadIdx.x": Affine(x=1), "threadIdx.y": Affine(y=1), "threadIdx.z": Affine(z=1)}.get(name)
        return Val(_SPECIAL_CODE[name], INT32, vec=name.startswith("threadIdx"), affine=aff)

    def x_ConstArray(self, e: N.ConstArray, ctx) -> Val:
        return Val(e.name, e.type, array=self.const_array(e))

    # -- conversions and operators --------------------------------------------------------------------------------
    def x_Cast(self, e: N.Cast, ctx) -> Val:
        v = self.expr(e.value, ctx)
        src, dst = e.value.type, e.type
        if not isinstance(dst, Scalar) or not isinstance(src, Scalar):
            raise self.fail(e.line, f"a conversion from {src} to {dst} has no Triton translation")
        if v.lit:
            return literal(convert(np.asarray(v.value, src.dtype)[()], dst.dtype), dst)
        aff = v.affine if dst.is_int and src.is_int and dst.bits >= src.bits else None
        if dst.is_bool:
            return Val(f"({v.code} != 0)", dst, vec=v.vec, pure=v.pure)
        return Val(f"{v.code}.to({tl_type(dst)})", dst, vec=v.vec, affine=aff, pure=v.pure)

    def x_Unary(self, e: N.Unary, ctx) -> Val:
        v = self.expr(e.operand, ctx)
        t = e.type
        if v.lit:
            x = np.asarray(v.value, t.dtype)[()]
            if e.op == "neg":
                r = -x if not t.is_bool else x
            else:
                r = ~x if not t.is_bool else (not x)
            return literal(r, t)
        if e.op == "neg":
            aff = v.affine.scale(-1) if v.affine is not None else None
            return Val(f"(-{v.code})", t, vec=v.vec, affine=aff, pure=v.pure)
        return Val(f"(~{v.code})", t, vec=v.vec, pure=v.pure)

    def x_Binary(self, e: N.Binary, ctx) -> Val:
        a = self.expr(e.left, ctx)
        b = self.expr(e.right, ctx)
        t: Scalar = e.type
        op = e.op
        vec, pure = a.vec or b.vec, a.pure and b.pure
        if op == "pow":
            return self.power(a, b, t, e)
        if op in ("floordiv", "mod") and a.lit and b.lit and t.is_int and int(b.value) != 0:
            q, r = divmod(int(a.value), int(b.value))        # Python's floor division, as numba's on ints
            return literal(_wrap(q if op == "floordiv" else r, t), t)
        if op in ("floordiv", "mod"):
            return self.floor_division(a, b, t, op, e)
        if op == "truediv":
            x, y = typed(a), typed(b)
            code = f"tl.div_rn({x}, {y})" if t.bits == 32 else f"({x} / {y})"   # float64 "/" is IEEE already
            return Val(code, t, vec=vec, pure=pure)
        if a.lit and b.lit and t.is_int and op in _FOLD:
            return literal(_wrap(_FOLD[op](int(a.value), int(b.value)), t), t)
        aff = None
        if a.affine is not None and b.affine is not None:
            if op == "add":
                aff = a.affine + b.affine
            elif op == "sub":
                aff = a.affine + b.affine.scale(-1)
            elif op == "mul" and b.lit:
                aff = a.affine.scale(int(b.value))
            elif op == "mul" and a.lit:
                aff = b.affine.scale(int(a.value))
        return Val(f"({operand(a, b)} {_OPS[op]} {operand(b, a)})", t, vec=vec, affine=aff, pure=pure)

    def floor_division(self, a: Val, b: Val, t: Scalar, op: str, e: N.Binary) -> Val:
        vec, pure = a.vec or b.vec, a.pure and b.pure
        if a.lit and b.lit and t.is_int and int(b.value) != 0:     # Python's // and % are the IR's
            x, y = int(a.value), int(b.value)
            return literal(_wrap(x // y if op == "floordiv" else x % y, t), t)
        if t.is_float:
            fn = self.helper("floordiv_float" if op == "floordiv" else "mod_float")
            return Val(f"{fn}({typed(a)}, {typed(b)})", t, vec=vec, pure=pure)
        if b.lit and int(b.value) > 0 and (int(b.value) & (int(b.value) - 1)) == 0:
            k = int(b.value).bit_length() - 1          # a power of two: a shift and a mask are Python's floor
            if op == "floordiv":
                return Val(f"({typed(a)} >> {k})" if k else typed(a), t, vec=vec, pure=pure)
            return Val(f"({typed(a)} & {int(b.value) - 1})", t, vec=vec, pure=pure)
        if not t.signed:
            sym = "//" if op == "floordiv" else "%"
            return Val(f"({operand(a, b)} {sym} {operand(b, a)})", t, vec=vec, pure=pure)
        fn = self.helper("floordiv" if op == "floordiv" else "mod")
        return Val(f"{fn}({typed(a)}, {typed(b)})", t, vec=vec, pure=pure)

    def power(self, a: Val, b: Val, t: Scalar, e: N.Binary) -> Val:
        vec, pure = a.vec or b.vec, a.pure and b.pure
        if t.is_float and not e.right.type.is_int:
            self.uses.add("libdevice")
            return Val(f"libdevice.pow({typed(a)}, {typed(b)})", t, vec=vec, pure=pure)
        if b.lit and 0 <= int(b.value) <= 64:
            # numba's repeated squaring, unrolled: every product rounded (or wrapped) in the type
            base = self.value_of(a)
            n, r, sq = int(b.value), None, base
            while n:
                if n & 1:
                    r = sq if r is None else self.keep(f"({r} * {sq})", t, vec)
                n >>= 1
                if n:
                    sq = self.keep(f"({sq} * {sq})", t, vec)
            return Val(r, t, vec=vec, pure=pure) if r is not None else literal(1, t)
        fn = self.helper("ipow" if t.is_int else "fpow")
        return Val(f"{fn}({typed(a)}, {typed(b)}.to(tl.int64))", t, vec=vec, pure=pure)

    def value_of(self, v: Val) -> str:
        if v.code.isidentifier():
            return v.code
        return self.keep(typed(v), v.type, v.vec)

    def keep(self, code: str, t, vec: bool) -> str:
        name = self.tmp()
        self.emit(f"{name} = {code}")
        return name

    def x_Compare(self, e: N.Compare, ctx) -> Val:
        a = self.expr(e.left, ctx)
        b = self.expr(e.right, ctx)
        if a.lit and b.lit:
            x, y = a.value, b.value
            r = {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y, "eq": x == y, "ne": x != y}[e.op]
            return literal(r, BOOL)
        return Val(f"({operand(a, b)} {_OPS[e.op]} {operand(b, a)})", BOOL, vec=a.vec or b.vec,
                   pure=a.pure and b.pure)

    # -- short circuits --------------------------------------------------------------------------------------
    def x_Logical(self, e: N.Logical, ctx) -> Val:
        """``a and b`` / ``a or b``: ``b`` is evaluated only where ``a`` does not decide (its memory accesses
        masked to those lanes)."""
        is_and = e.op == "and"
        a = self.value(e.left, ctx)
        cond = a.code if e.left.type == BOOL else f"({typed(a)} != 0)"
        if a.lit:
            taken = bool(a.value) if is_and else not bool(a.value)
            return self.expr(e.right, ctx) if taken else a
        inner = ctx.narrowed(cond if is_and else f"~{cond}", self)
        stmts, b = self.sub(inner, e.right)
        inner.emit_mask(self, stmts)
        self.splice(stmts)
        vec = a.vec or b.vec
        if e.type == BOOL:
            return Val(f"({a.code} {'&' if is_and else '|'} {operand(b, a)})", BOOL, vec=vec, pure=a.pure and b.pure)
        taken, kept = (b, a) if is_and else (a, b)
        return Val(f"tl.where({cond}, {typed(taken)}, {typed(kept)})", e.type, vec=vec, pure=a.pure and b.pure)

    def x_Select(self, e: N.Select, ctx) -> Val:
        c = self.value(e.cond, ctx)
        if c.lit:
            return self.expr(e.then if c.value else e.orelse, ctx)
        then_ctx = ctx.narrowed(c.code, self)
        else_ctx = ctx.narrowed(f"~{c.code}", self)
        s1, a = self.sub(then_ctx, e.then)
        s2, b = self.sub(else_ctx, e.orelse)
        then_ctx.emit_mask(self, s1)
        self.splice(s1)
        else_ctx.emit_mask(self, s2)
        self.splice(s2)
        if a.items is not None:
            items = [Val(f"tl.where({c.code}, {typed(x)}, {typed(y)})", x.type, vec=c.vec or x.vec or y.vec)
                     for x, y in zip(a.items, b.items)]
            return Val("", e.type, items=items, vec=any(i.vec for i in items))
        return Val(f"tl.where({c.code}, {typed(a)}, {typed(b)})", e.type, vec=c.vec or a.vec or b.vec,
                   pure=c.pure and a.pure and b.pure)

    def x_Let(self, e: N.Let, ctx) -> Val:
        v = self.expr(e.value, ctx)
        self.assign_local(e.name, e.value.type, v, ctx, e.line)
        return self.expr(e.body, ctx)

    # -- tuples ------------------------------------------------------------------------------------------------
    def x_MakeTuple(self, e: N.MakeTuple, ctx) -> Val:
        items = [self.value(i, ctx) for i in e.items]
        return Val("", e.type, items=items, vec=any(i.vec for i in items))

    def x_TupleItem(self, e: N.TupleItem, ctx) -> Val:
        v = self.expr(e.value, ctx)
        if v.items is None:
            raise self.fail(e.line, "indexing this tuple has no Triton translation")
        return v.items[e.index]

    def x_TupleIndex(self, e: N.TupleIndex, ctx) -> Val:
        v = self.expr(e.value, ctx)
        k = self.value(e.index, ctx)
        if v.items is None or not v.items:
            raise self.fail(e.line, "indexing this tuple has no Triton translation")
        if k.lit:
            return v.items[int(k.value)]
        code = typed(v.items[-1])
        for j in range(len(v.items) - 2, -1, -1):
            code = f"tl.where({k.code} == {j}, {typed(v.items[j])}, {code})"
        return Val(code, e.type, vec=k.vec or any(i.vec for i in v.items))

    def x_Trap(self, e: N.Trap, ctx) -> Val:
        raise self.fail(e.line, f"this operation always fails ({e.message}); there is nothing to translate")

    # -- arrays ------------------------------------------------------------------------------------------------
    def x_ArrayShape(self, e: N.ArrayShape, ctx) -> Val:
        ref = self.array_of(e.array, ctx)
        return self.shape_val(ref.shape[e.dim])

    def x_ArraySize(self, e: N.ArraySize, ctx) -> Val:
        ref = self.array_of(e.array, ctx)
        if all(s.isdigit() for s in ref.shape):
            return literal(int(np.prod([int(s) for s in ref.shape])), INT64)
        return Val(f"({ref.numel})", INT64)

    @staticmethod
    def shape_val(code: str) -> Val:
        return literal(int(code), INT64) if code.isdigit() else Val(code, INT64)

    def flat_index(self, ref: ArrayRef, index: list[N.Expr], ctx) -> Val:
        """The element offset of ``ref[index]``: the sum of each index times its dimension's stride."""
        vals = [self.expr(i, ctx) for i in index]
        terms, aff, consts = [], Affine(), True
        vec, pure = False, True
        for v, stride in zip(vals, ref.strides):
            vec, pure = vec or v.vec, pure and v.pure
            if v.lit and int(v.value) == 0:
                continue
            if v.affine is not None and stride.isdigit() and aff is not None:
                aff = aff + v.affine.scale(int(stride))
            else:
                aff = None
            consts = consts and v.lit and stride.isdigit()
            terms.append(v.code if stride == "1" else f"{operand(v, Val(stride, INT64))} * {stride}")
        if consts:
            total = sum(int(v.value) * int(s) for v, s in zip(vals, ref.strides))
            return literal(total, INT64)
        if not terms:
            return literal(0, INT64)
        code = terms[0] if len(terms) == 1 else "(" + " + ".join(terms) + ")"
        return Val(code, INT64, vec=vec, affine=aff, pure=pure)

    def x_Load(self, e: N.Load, ctx) -> Val:
        ref = self.array_of(e.array, ctx)
        off = self.flat_index(ref, e.index, ctx)
        return self.memory.load(self, ref, off, ctx, e)

    # -- calls -------------------------------------------------------------------------------------------------
    def x_Intrinsic(self, e: N.Intrinsic, ctx) -> Val:
        args = [self.value(a, ctx) for a in e.args]
        vec = any(a.vec for a in args)
        name = e.name
        t = e.type
        if name in ("min", "max"):
            code = typed(args[0])
            fn = "tl.minimum" if name == "min" else "tl.maximum"
            nan = ", propagate_nan=tl.PropagateNan.ALL" if isinstance(t, Scalar) and t.is_float else ""
            for a in args[1:]:
                code = f"{fn}({code}, {typed(a)}{nan})"
            return Val(code, t, vec=vec)
        if name == "selp":
            return Val(f"tl.where({args[0].code}, {typed(args[1])}, {typed(args[2])})", t, vec=vec)
        xs = ", ".join(typed(a) for a in args)
        if name == "math.sqrt":
            return Val(f"tl.sqrt_rn({xs})" if t.bits == 32 else f"tl.sqrt({xs})", t, vec=vec)
        if name in _PLAIN_MATH:
            return Val(f"{_PLAIN_MATH[name]}({xs})", t, vec=vec)
        if name in ("math.isnan", "math.isinf", "math.isfinite"):
            x = args[0].code
            code = {"math.isnan": f"({x} != {x})", "math.isinf": f"(tl.abs({x}) == float('inf'))",
                    "math.isfinite": f"(tl.abs({x}) < float('inf'))"}[name]
            return Val(code, BOOL, vec=vec)
        if name in _LIBDEVICE:
            self.uses.add("libdevice")
            return Val(f"libdevice.{_LIBDEVICE[name]}({xs})", t, vec=vec)
        if name in ("math.radians", "math.degrees"):
            k = np.pi / 180 if name == "math.radians" else 180 / np.pi
            return Val(f"({typed(args[0])} * {operand(literal(k, t), args[0])})", t, vec=vec)
        if name in ("popc", "clz", "ffs", "brev"):
            at: Scalar = e.args[0].type
            if name == "brev" or at.bits == 64 or (at.bits == 32 and at.signed):
                wide = at.bits == 64
            elif name == "popc" or name == "ffs":
                wide = False
            else:
                raise self.fail(e.line, f"{name}() of a {at} (libdevice counts in 32 or 64 bits)")
            signed = "tl.int64" if wide else "tl.int32"
            x = args[0].code
            if at.bits < 32:
                x = f"{x}.to({'tl.uint32' if not at.signed else 'tl.int32'})"
            arg = f"{x}.to({signed}, bitcast=True)" if at.bits >= 32 or not at.signed else x
            self.uses.add("libdevice")
            code = f"libdevice.{name}({arg})"
            if isinstance(t, Scalar) and t.name != "int32":
                code = f"{code}.to({tl_type(t)}{', bitcast=True' if name == 'brev' else ''})"
            return Val(code, t, vec=vec)
        if name == "round":
            self.uses.add("libdevice")
            return Val(f"libdevice.rint({xs}).to(tl.int64)", t, vec=vec)
        raise self.fail(e.line, f"the function {name}() has no Triton translation here")

    def x_Fma(self, e: N.Fma, ctx) -> Val:
        a, b, c = (self.expr(x, ctx) for x in (e.a, e.b, e.c))
        return Val(f"tl.fma({typed(a)}, {typed(b)}, {typed(c)})", e.type, vec=a.vec or b.vec or c.vec,
                   pure=a.pure and b.pure and c.pure)

    def x_Call(self, e: N.Call, ctx) -> Val:
        return self.inline(e, ctx)

    def x_Atomic(self, e: N.Atomic, ctx) -> Val:
        ref = self.array_of(e.array, ctx)
        off = self.flat_index(ref, e.index, ctx)
        val = self.value(e.value, ctx)
        cmp = self.value(e.compare, ctx) if e.compare is not None else None
        return self.memory.atomic(self, ref, off, val, cmp, ctx, e)

    # -- warps and the block ---------------------------------------------------------------------------------
    def x_Shuffle(self, e: N.Shuffle, ctx) -> Val:
        self.expr(e.mask, ctx)
        return self.warps.shuffle(self, e, ctx)

    def x_Vote(self, e: N.Vote, ctx) -> Val:
        return self.warps.vote(self, e, ctx)

    def x_Match(self, e: N.Match, ctx) -> Val:
        return self.warps.match(self, e, ctx)

    def x_ActiveMask(self, e: N.ActiveMask, ctx) -> Val:
        return self.warps.active_mask(self, e, ctx)

    def x_BarrierReduce(self, e: N.BarrierReduce, ctx) -> Val:
        return self.warps.barrier_reduce(self, e, ctx)


def bits_type(t: Scalar) -> str:
    return BITS_OF.get(t.name, tl_type(t))


__all__ = ["Array", "ExpressionGen", "Tuple", "literal", "operand", "typed"]
