"""Lowering expressions to typed IR: names, constants, operators, subscripts, attributes.

Each method returns an IR expression whose ``type`` numba-cuda would give it (``typing.py``), with the
conversions numba makes implicitly written out as ``Cast`` nodes.
"""

from __future__ import annotations

import ast
import builtins
import enum
from typing import Any

import numpy as np

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import BOOL, FLOAT64, INT64, NONE, Array, CharSeq, Optional, RecordRef, Scalar, Tuple, Type
from ..ir.values import convert, python_value
from . import typing as ty
from .constants import literal_type
from .datetimes import DateTime
from .enums import EnumClassRef, EnumMember, as_plain_int
from .names import (
    BUILTINS,
    MATH_CONSTS,
    BuiltinRef,
    ConstArrayRef,
    CudaRef,
    DeviceFnRef,
    DTypeRef,
    IntEnumRef,
    MathRef,
    ModuleRef,
    OtherRef,
    PyModuleRef,
    attribute_chain,
    classify_global,
    qualified,
)
from .records import is_record_array
from .tree_nodes import all_nodes


class TypeConflict(Type):
    """The type of a local whose paths merge with types that cannot unify: an error when it is read."""

    def __init__(self, a: Type, b: Type, line: int):
        self.a, self.b, self.line = a, b, line

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeConflict) and (self.a, self.b) == (other.a, other.b)

    def __hash__(self) -> int:
        return hash((self.a, self.b))

    def __str__(self) -> str:
        return f"{self.a} or {self.b}"


_DIM3 = ("threadIdx", "blockIdx", "blockDim", "gridDim")
#: expressions without effects, which folding may drop or duplicate
_PURE = (N.Const, N.Var, N.Special, N.ArrayShape, N.ArraySize, N.ConstArray)


class ExprLowering:
    BINOP_NAMES = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
                   ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift", ast.BitOr: "or",
                   ast.BitXor: "xor", ast.BitAnd: "and"}
    CMP_NAMES = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}

    # -- conversions --------------------------------------------------------------------------------------
    def cast(self, e: N.Expr, t: Type) -> N.Expr:
        """``e`` converted to ``t`` (folded for a constant)."""
        if e.type == t:
            return e
        if isinstance(t, Optional) and not isinstance(e.type, Optional):  # a value where None may also arrive
            return N.MakeTuple([self.cast(e, t.value_type), N.Const(True, type=BOOL, line=e.line)], type=t,
                               line=e.line)
        if isinstance(t, Tuple) and isinstance(e.type, Tuple) and len(t.items) == len(e.type.items):
            if isinstance(e, N.MakeTuple):
                return N.MakeTuple([self.cast(x, u) for x, u in zip(e.items, t.items)], type=t, line=e.line)
            items = [self.cast(N.TupleItem(e, k, type=s, line=e.line), u)
                     for k, (s, u) in enumerate(zip(e.type.items, t.items))]
            return N.MakeTuple(items, type=t, line=e.line)
        if isinstance(t, CharSeq) and isinstance(e.type, CharSeq) and t.kind == e.type.kind:
            # a constant is truncated to the target's length, or padded with NULs
            if isinstance(e, N.Const):
                return N.Const(e.value[:t.count], type=t, line=e.line)
            # a string element of another length: numba-cuda has no conversion between the lengths ("No
            # implementation of function setitem(array([char x 3], ...), int64, [char x 2])" on the H200)
            raise self.error(e.line, f"cannot store a {e.type} element into a {t} cell: numba-cuda copies a string "
                                     "element only into an array or record field of its own length "
                                     f"({t.kind}{e.type.count} here); store a string constant (truncated or padded "
                                     "with NULs), or copy from an array of the same length", KernelCompileError)
        if isinstance(t, CharSeq) or isinstance(e.type, CharSeq):
            raise self.error(e.line, f"cannot convert a {e.type} to {t} (numba-cuda stores bytes into S arrays and "
                                     "fields, and str into U ones, and converts strings to nothing else)",
                             KernelCompileError)
        if isinstance(e.type, Optional) and not isinstance(t, Optional):
            return self.cast(self.unwrap(e), t)
        if not (isinstance(t, Scalar) and isinstance(e.type, Scalar)):
            raise self.error(e.line, f"cannot convert a {e.type} to {t}", KernelCompileError)
        if e.type.is_complex and not t.is_complex:
            raise self.error(e.line, f"cannot convert a {e.type} to {t} (numba-cuda converts a complex number to a "
                                     "real one nowhere: take its .real or abs())", KernelCompileError)
        if isinstance(e, N.Const):
            return N.Const(python_value(convert(e.type.dtype.type(e.value), t.dtype)), type=t, line=e.line)
        return N.Cast(e, type=t, line=e.line)

    def once(self, e: N.Expr, out: list, line: int) -> N.Expr:
        """``e`` as a value that can be read again without evaluating it again: itself for a variable or a
        constant, else a temporary assigned it by a statement appended to ``out``."""
        if isinstance(e, (N.Var, N.Const)):
            return e
        name = self.tmp()
        out.append(N.Assign(name, e, line=line))
        return N.Var(name, type=e.type, line=line)

    def truth(self, e: N.Expr, node: ast.AST) -> N.Expr:
        if e.type == BOOL:
            return e
        e = self.unwrap(e)
        if not isinstance(e.type, Scalar):
            raise self.error(node, f"the truth value of a {e.type} is not defined in a kernel")
        return self.cast(e, BOOL)

    def const(self, value: Any, node: ast.AST) -> N.Const:
        t = literal_type(value)
        if t is None:
            raise self.error(node, f"the integer {value} does not fit in 64 bits (numba-cuda rejects it)",
                             KernelCompileError)
        return N.Const(python_value(value) if not isinstance(value, bool) else value, type=t, line=node.lineno)

    # -- names ------------------------------------------------------------------------------------------------
    def global_ref(self, name: str, node: ast.AST) -> Any:
        cache = self.builder.global_cache(self.cache_key)
        if name in cache:
            return cache[name]
        if name in self.globals:
            try:
                ref = classify_global(name, self.globals[name])
            except LookupError as e:
                raise self.error(node, f"the name {name!r} refers to a {e.args[0]}, which a kernel cannot "
                                       "use") from None
        elif name in BUILTINS:
            ref = BuiltinRef(name)
        elif hasattr(builtins, name):
            raise self.error(node, f"the builtin {name}() is not supported in a kernel")
        else:
            raise self.error(node, f"the name {name!r} is not defined", KernelCompileError)
        cache[name] = ref
        return ref

    def resolve(self, node: ast.AST) -> Any:
        """What a name or attribute chain on a global refers to; None for an expression on a local."""
        node, parts = attribute_chain(node)
        if not isinstance(node, ast.Name) or node.id in self.locals:
            return None
        return qualified(self.global_ref(node.id, node), parts)

    def name_value(self, node: ast.Name) -> N.Expr:
        name = node.id
        if name in self.locals:
            if name not in self.env:
                if name in self.seen_types and not self.loops:
                    # assigned on another path only: numba compiles it (an undefined value); a thread that
                    # reads it is a fault at run time
                    return N.Trap(f"the local {name!r} is read on a path where it was never assigned",
                                  type=self.seen_types[name], line=node.lineno)
                if not (self.loops and name in self.seen_types):
                    raise self.error(node, f"the local {name!r} is read before it is assigned", KernelCompileError)
                # assigned on another path of this loop, which an earlier iteration may have taken (numba
                # types it so; a thread that reads it unassigned is a fault at run time)
                return N.Var(name, type=self.seen_types[name], line=node.lineno)
            t = self.env[name]
            if isinstance(t, TypeConflict):
                raise self.error(node, f"{name!r} holds a {t.a} on one path and a {t.b} on another (line "
                                       f"{t.line}): numba-cuda cannot unify them", KernelCompileError)
            return N.Var(name, type=t, line=node.lineno)
        return self.ref_value(self.global_ref(name, node), node)

    def ref_value(self, ref: Any, node: ast.AST) -> N.Expr:
        line = node.lineno
        if isinstance(ref, enum.Enum) and not isinstance(ref, int):
            return self.enum_const(ref, node)
        if isinstance(ref, (bool, int, float, np.bool_, np.integer, np.floating)):
            if isinstance(ref, np.generic):  # a NumPy scalar keeps its type (numba: a typed constant)
                t = Scalar(np.dtype(type(ref)).name)
                return N.Const(python_value(ref), type=t, line=line)
            return self.const(ref, node)
        if isinstance(ref, tuple):
            items = [self.ref_value(v, node) for v in ref]
            return N.MakeTuple(items, type=Tuple(tuple(i.type for i in items)), line=line)
        if isinstance(ref, ConstArrayRef):
            return self.const_array(ref, node)
        if isinstance(ref, CudaRef):
            if ref.path in N.SPECIALS:
                return N.Special(ref.path, type=N.SPECIALS[ref.path], line=line)
            if ref.path in _DIM3:
                items = [N.Special(f"{ref.path}.{a}", type=N.SPECIALS[f"{ref.path}.{a}"], line=line) for a in "xyz"]
                return N.MakeTuple(items, type=Tuple(tuple(i.type for i in items)), line=line)
            raise self.error(node, f"cuda.{ref.path} is not supported by gpusim as a value")
        if isinstance(ref, MathRef):
            if ref.name in MATH_CONSTS:
                return N.Const(float(MATH_CONSTS[ref.name]), type=FLOAT64, line=line)
            raise self.error(node, f"math.{ref.name} is not supported in a kernel")
        what = {DeviceFnRef: "a function", DTypeRef: "a type", ModuleRef: "a module", PyModuleRef: "a module",
                BuiltinRef: "a builtin",
                OtherRef: "an object"}.get(type(ref), "an object")
        raise self.error(node, f"{ast.unparse(node)} is {what}: it cannot be used as a value here")

    def const_array(self, ref: ConstArrayRef, node: ast.AST) -> N.ConstArray:
        data = ref.array if ref.by_pointer else self.builder.frozen_array(ref.array)
        from ..ir.types import array_of

        try:
            if data.dtype.kind not in "biufc" and data.dtype.fields is None:
                raise ValueError
            t = array_of(data, "const")
        except ValueError as e:
            why = f" ({e})" if str(e) else ""
            raise self.error(node, f"the module array {ref.name!r} has dtype {data.dtype}{why}: a kernel reads "
                                   "arrays of numbers or of records of numbers only") from None
        return N.ConstArray(ref.name, data, by_pointer=ref.by_pointer, type=Array(t.dtype, t.ndim, "C", "const"),
                            line=node.lineno)

    # -- expressions ----------------------------------------------------------------------------------------
    def expr(self, node: ast.AST) -> N.Expr:
        line = node.lineno
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, (bool, int, float)):
                return self.const(v, node)
            if isinstance(v, (str, bytes)):  # a constant string: stored into S/U arrays and fields (CharSeq)
                return N.Const(v, type=CharSeq("S" if isinstance(v, bytes) else "U", len(v)), line=line)
            if isinstance(v, complex):
                return N.Const(v, type=literal_type(v), line=line)
            if v is None:
                raise self.error(node, "None cannot be used as a value in a kernel")
            raise self.error(node, f"the constant {v!r} cannot be used in a kernel")
        if isinstance(node, ast.Name):
            return self.name_value(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.BinOp):
            return self.binary(self.BINOP_NAMES[type(node.op)], self.expr(node.left), self.expr(node.right), node)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.BoolOp):
            return self.logical(node)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.IfExp):
            return self.select(node)
        if isinstance(node, ast.Call):
            e = self.call(node, used=True)
            if e is None or e.type == NONE:
                raise self.error(node, f"{ast.unparse(node.func)}() returns nothing: it cannot be used as a value")
            return e
        if isinstance(node, ast.Tuple):
            items = [self.expr(e) for e in node.elts]
            return N.MakeTuple(items, type=Tuple(tuple(i.type for i in items)), line=line)
        if isinstance(node, ast.Starred):
            raise self.error(node, "*-unpacking cannot be used in a kernel here (a tuple spreads into a builtin's "
                                   "or a math function's arguments only)")
        if isinstance(node, ast.Slice):
            raise self.error(node, "only arrays can be sliced in a kernel (not tuples or numbers)")
        raise self.error(node, f"{type(node).__name__} expressions are not supported in a kernel")

    def attribute(self, node: ast.Attribute) -> N.Expr:
        ref = self.resolve(node)
        if ref is not None:
            return self.ref_value(ref, node)
        alias = self.dim3_alias(node.value)
        if alias is not None and node.attr in ("x", "y", "z"):
            return self.ref_value(CudaRef(f"{alias}.{node.attr}"), node)
        base = self.expr(node.value)
        t = base.type
        line = node.lineno
        if isinstance(t, RecordRef):
            return self.record_field(base, node, node.attr)
        if is_record_array(t) and t.dtype.field(node.attr) is not None:
            return self.field_view(base, t.dtype.field(node.attr), line)
        if isinstance(t, Array):
            if node.attr == "shape":
                items = [N.ArrayShape(base, d, type=INT64, line=line) for d in range(t.ndim)]
                return N.MakeTuple(items, type=Tuple(tuple(INT64 for _ in items)), line=line)
            if node.attr == "size":
                return N.ArraySize(base, type=INT64, line=line)
            if node.attr == "ndim":
                return N.Const(t.ndim, type=INT64, line=line)
            if node.attr in ("real", "imag") and isinstance(t.dtype, Scalar) and t.dtype.is_complex:
                # a view of the parts (an atomic may update one: numba-cuda issue 8309)
                part = Scalar(f"float{t.dtype.bits // 2}")
                return N.FieldView(base, node.attr, type=Array(part, t.ndim, "A", t.space), line=line)
            raise self.error(node, f"the array attribute .{node.attr} is not supported in a kernel")
        if isinstance(t, Scalar) and node.attr in ("real", "imag"):
            return self.complex_part(base, node.attr, line)
        if isinstance(t, Tuple) and t.fields is not None and node.attr in t.fields:  # a namedtuple's field
            k = t.fields.index(node.attr)
            return N.TupleItem(base, k, type=t.items[k], line=line)
        raise self.error(node, f"the attribute .{node.attr} is not supported in a kernel")

    def dim3_alias(self, node: ast.AST) -> str | None:
        """``"threadIdx"`` for a local ``tid`` that every assignment in the function sets to ``cuda.threadIdx``
        (likewise blockIdx, blockDim, gridDim) and that is assigned on this path: numba-cuda types it as a
        dim3, whose ``.x``/``.y``/``.z`` are the thread's own values."""
        if not isinstance(node, ast.Name) or node.id not in self.env or node.id in self.params:
            return None
        aliases = self.__dict__.setdefault("_dim3_aliases", {})
        if node.id not in aliases:
            stores = [n for n in all_nodes(self.tree) if isinstance(n, ast.Name) and n.id == node.id
                      and isinstance(n.ctx, ast.Store)]
            sets = [n.value for n in all_nodes(self.tree) if isinstance(n, ast.Assign)
                    and len(n.targets) == 1 and n.targets[0] in stores]
            paths = {ref.path if isinstance(ref := self.resolve(v), CudaRef) else None for v in sets}
            alias = paths.pop() if len(sets) == len(stores) and len(paths) == 1 else None
            aliases[node.id] = alias if alias in _DIM3 else None
        return aliases[node.id]

    @staticmethod
    def complex_part(z: N.Expr, part: str, line: int) -> N.Expr:
        """``z.real`` / ``z.imag``: of a complex number, its part, a float of half its width; of a real number, the
        number itself and a zero of its type (numba's rules)."""
        t = z.type
        if t.is_complex:
            return N.Intrinsic(f"complex.{part}", [z], type=Scalar(f"float{t.bits // 2}"), line=line)
        if part == "real":
            return z
        return N.Const(False if t.is_bool else 0.0 if t.is_float else 0, type=t, line=line)

    def subscript(self, node: ast.Subscript) -> N.Expr:
        cls = self.resolve(node.value)
        if isinstance(cls, (EnumClassRef, IntEnumRef)):
            return self.enum_item(cls.cls, node)
        base = self.expr(node.value)
        line = node.lineno
        if isinstance(base.type, RecordRef) or (is_record_array(base.type) and isinstance(
                self.record_key(node), str)):
            return self.record_subscript(base, node)
        if isinstance(base.type, Array) and self.is_view_index(node, base.type):
            return self.array_view(base, node)
        if isinstance(base.type, Array):
            index = self.index(node, base)
            if isinstance(index, N.Trap):
                return index
            if is_record_array(base.type):
                return self.record_element(base, index, line)
            array, index = self.element_of(base, index)
            return N.Load(array, index, type=base.type.dtype, line=line)
        if isinstance(base.type, Tuple):
            return self.tuple_item(base, node.slice, node)
        raise self.error(node, f"a {base.type} cannot be indexed")

    def tuple_item(self, base: N.Expr, index_node: ast.AST, node: ast.AST) -> N.Expr:
        t = base.type
        idx = self.expr(index_node)
        n = len(t.items)
        if isinstance(idx, N.Const) and isinstance(idx.type, Scalar) and idx.type.is_int:
            k = idx.value + n if idx.value < 0 else idx.value
            if not 0 <= k < n:
                raise self.error(node, f"tuple index {idx.value} is out of range for a tuple of {n}",
                                 KernelCompileError)
            if isinstance(base, N.MakeTuple) and all(isinstance(i, _PURE) for i in base.items):
                return base.items[k]
            return N.TupleItem(base, k, type=t.items[k], line=node.lineno)
        if not (isinstance(idx.type, Scalar) and idx.type.is_int):
            raise self.error(node, f"a tuple index must be an integer, not {idx.type}")
        if t.uniform is None:
            raise self.error(node, f"a tuple of different types {t} cannot be indexed by a value known only at "
                                   "run time")
        return N.TupleIndex(base, self.cast(idx, INT64), type=t.uniform, line=node.lineno)

    def index(self, node: ast.Subscript, array: N.Expr) -> list[N.Expr] | N.Trap:
        """The int64 index of each dimension of ``array[node.slice]`` (a ``Trap`` for a float index)."""
        sl = node.slice
        t: Array = array.type
        line = node.lineno
        if isinstance(sl, ast.Slice) or (isinstance(sl, ast.Tuple) and any(isinstance(e, ast.Slice)
                                                                          for e in sl.elts)):
            raise self.error(node, "a slice cannot be used here in a kernel (it makes a view: v = a[1:3], then "
                                   "use v)")
        if isinstance(sl, ast.Tuple):
            comps = [self.expr(e) for e in sl.elts]
        else:
            e = self.expr(sl)
            if isinstance(e.type, Tuple):
                if isinstance(e, N.MakeTuple):
                    comps = list(e.items)
                elif isinstance(e, N.Var):
                    comps = [N.TupleItem(e, k, type=it, line=line) for k, it in enumerate(e.type.items)]
                else:
                    raise self.error(node, "index an array with a tuple held in a variable, or with a, b, ...")
            else:
                comps = [e]
        out = []
        for c in comps:
            ct = c.type
            if isinstance(ct, Scalar) and ct.is_float:
                return N.Trap(f"array index must be an integer, not {ct}", type=t.dtype, line=line)
            if not (isinstance(ct, Scalar) and (ct.is_int or ct.is_bool)):
                raise self.error(node, f"an array index must be an integer, not a {ct}")
            out.append(self.cast(c, INT64))
        if len(out) != t.ndim:
            name = ast.unparse(node.value)
            raise self.error(node, f"array {name!r} has {t.ndim} dimension{'s' if t.ndim != 1 else ''} but is "
                                   f"indexed with {len(out)}", KernelCompileError)
        return out

    # -- operators ----------------------------------------------------------------------------------------------
    def binary(self, op: str, left: N.Expr, right: N.Expr, node: ast.AST) -> N.Expr:
        if isinstance(left.type, EnumMember) or isinstance(right.type, EnumMember):
            decided = self.enum_compare(op, left, right, node)
            if decided is not None:
                return decided
            left, right = as_plain_int(left), as_plain_int(right)
        if isinstance(left.type, DateTime) or isinstance(right.type, DateTime):
            return self.datetime_binary(op, left, right, node)
        sym = N.SYMBOLS[op]
        left, right = self.unwrap(left), self.unwrap(right)
        if not (isinstance(left.type, Scalar) and isinstance(right.type, Scalar)):
            strings = isinstance(left.type, CharSeq) or isinstance(right.type, CharSeq)
            raise self.error(node, f"the operator {sym} is not supported on {left.type} and {right.type} in a "
                                   "kernel" + (" (gpusim stores and copies strings; it computes nothing with them)"
                                               if strings else ""))
        sig = ty.binary(op, left.type, right.type)
        if sig is None:
            raise self.error(node, f"numba-cuda has no {sym} for {left.type} and {right.type}", KernelCompileError)
        ret = sig.ret
        line = getattr(node, "lineno", left.line)
        if op in N.COMPARE_OPS:
            a, b = self.cast(left, sig.args[0]), self.cast(right, sig.args[1])
            if isinstance(a, N.Const) and isinstance(b, N.Const) and sig.args[0].kind in "biu":
                # two integer constants (len(args) == 2 of a *args tuple): decided now, as numba prunes the branch
                value = {"lt": a.value < b.value, "le": a.value <= b.value, "gt": a.value > b.value,
                         "ge": a.value >= b.value, "eq": a.value == b.value, "ne": a.value != b.value}[op]
                return N.Const(bool(value), type=BOOL, line=line)
            return N.Compare(op, a, b, type=BOOL, line=line)
        exponent = sig.args[1] if op == "pow" and ret.is_float and sig.args[1].is_int else ret
        divisor = self.cast(right, exponent)
        value = N.Binary(op, self.cast(left, ret), divisor, type=ret, line=line)
        return self.checked_division(op, divisor, value, line)

    def unary(self, node: ast.UnaryOp) -> N.Expr:
        operand = self.expr(node.operand)
        line = node.lineno
        if isinstance(node.op, ast.Not):
            if not isinstance(operand.type, Scalar):
                raise self.error(node, f"`not` of a {operand.type} is not supported in a kernel")
            b = self.truth(operand, node)
            if isinstance(b, N.Const):
                return N.Const(not b.value, type=BOOL, line=line)
            return N.Unary("not", b, type=BOOL, line=line)
        op = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert"}[type(node.op)]
        if not isinstance(operand.type, Scalar):
            raise self.error(node, f"the operator {N.SYMBOLS.get(op, '+')} is not supported on a {operand.type}")
        sig = ty.unary(op, operand.type)
        if sig is None:
            raise self.error(node, f"numba-cuda has no unary {N.SYMBOLS.get(op, '+')} for {operand.type}",
                             KernelCompileError)
        if op == "invert" and sig.ret == BOOL:
            return N.Unary("not", operand, type=BOOL, line=line)
        if op == "pos":
            return self.cast(operand, sig.ret)
        arg = sig.args[0]
        if arg.kind in "bi":
            # a bool is negated as the int it converts to; a signed integer is widened first (the same as
            # numba's negate-then-widen except at the type's minimum: docs/gpu-semantics.md)
            arg = sig.ret
        x = self.cast(operand, arg)
        # unsigned integers are negated or inverted in their own width, then widened (numba's
        # int_negate_impl/int_invert_impl), so ~uint8(0) is 255
        if isinstance(x, N.Const):
            r = N.Const(python_value(-x.type.dtype.type(x.value) if op == "neg" else ~x.type.dtype.type(x.value)),
                        type=arg, line=line)
        else:
            r = N.Unary(op, x, type=arg, line=line)
        return self.cast(r, sig.ret)

    def logical(self, node: ast.BoolOp) -> N.Expr:
        op = "and" if isinstance(node.op, ast.And) else "or"
        values = [self.expr(v) for v in node.values]
        for v, n in zip(values, node.values):
            if not isinstance(v.type, Scalar):
                raise self.error(n, f"`{op}` of a {v.type} is not supported in a kernel")
        t = values[0].type
        for v in values[1:]:
            t = ty.unify(t, v.type)
        result = self.cast(values[-1], t)
        for v in reversed(values[:-1]):
            result = N.Logical(op, self.cast(v, t), result, type=t, line=node.lineno)
        return result

    def select(self, node: ast.IfExp) -> N.Expr:
        cond = self.truth(self.expr(node.test), node.test)
        if isinstance(cond, N.Const):
            return self.expr(node.body if cond.value else node.orelse)
        a, b = self.expr(node.body), self.expr(node.orelse)
        t = ty.unify(a.type, b.type)
        if t is None or isinstance(t, Array):
            raise self.error(node, f"the two values of a conditional expression ({a.type} and {b.type}) cannot be "
                                   "unified", KernelCompileError)
        return N.Select(cond, self.cast(a, t), self.cast(b, t), type=t, line=node.lineno)

    def compare(self, node: ast.Compare) -> N.Expr:
        if isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            return self.identity(node)
        ops = [self.CMP_NAMES[type(o)] for o in node.ops]
        if len(ops) == 1:
            return self.binary(ops[0], self.expr(node.left), self.expr(node.comparators[0]), node)
        # a < b < c: each operand evaluated once, in order, and c only where a < b holds (Python's chain)
        return self.chain(self.expr(node.left), ops, node.comparators, node)

    def identity(self, node: ast.Compare) -> N.Expr:
        """``x is None`` (a value of a kernel is never None: False), ``b is True`` / ``b is False`` of a bool
        (its value), and their ``is not``, as numba types them."""
        left = self.expr(node.left)
        negate = isinstance(node.ops[0], ast.IsNot)
        other = node.comparators[0]
        if not isinstance(other, ast.Constant):
            right = self.expr(other)
            same = self.enum_identity(left, right, negate, node)
            if same is not None:
                return same
            raise self.error(node, f"`is` compares with None, True or False only in a kernel (or two enum "
                                   f"members), not a {left.type} with a {right.type}")
        want = other.value
        line = node.lineno
        if want is None and isinstance(left.type, Optional):  # numba's Optional: None where not present
            present = N.TupleItem(left, 1, type=BOOL, line=line)
            return present if negate else N.Unary("not", present, type=BOOL, line=line)
        if want is None:
            return N.Const(negate, type=BOOL, line=line)
        if left.type != BOOL:  # an int or a float is never the object True (numba: False)
            return N.Const(negate, type=BOOL, line=line)
        test = self.binary("ne" if negate else "eq", left, N.Const(want, type=BOOL, line=line), node)
        return test

    def chain(self, left: N.Expr, ops: list[str], rest: list[ast.AST], node: ast.AST) -> N.Expr:
        line = node.lineno
        lets: list[tuple[str, N.Expr]] = []
        if not isinstance(left, _PURE):
            name = self.tmp()
            lets.append((name, left))
            left = N.Var(name, type=left.type, line=line)
        right = self.expr(rest[0])
        inner_lets: list[tuple[str, N.Expr]] = []
        if len(ops) > 1 and not isinstance(right, _PURE):
            name = self.tmp()
            inner_lets.append((name, right))
            right = N.Var(name, type=right.type, line=line)
        test = self.binary(ops[0], left, right, node)
        if len(ops) > 1:
            test = N.Logical("and", test, self.chain(right, ops[1:], rest[1:], node), type=BOOL, line=line)
        for name, value in reversed(inner_lets):
            test = N.Let(name, value, test, type=test.type, line=line)
        for name, value in reversed(lets):
            test = N.Let(name, value, test, type=test.type, line=line)
        return test

    def iterable_tuple(self, node: ast.AST) -> N.Expr | None:
        """The tuple a ``for`` loop iterates, or None when it iterates something else."""
        if isinstance(node, ast.Tuple) or (isinstance(node, ast.Name) and (
                node.id in self.locals or isinstance(self.global_ref(node.id, node), tuple))):
            e = self.expr(node)
            if isinstance(e.type, Tuple) and e.type.items:
                return e
        return None
