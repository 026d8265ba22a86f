"""IR expressions -> a flat list of per-lane operations, in the order the lanes back end evaluates them.

An operation (``Op``) computes one value for every lane of the chunk (``val``, ``div``, ``tidx``, ``load``,
``atomic``), stores (``store``) or assigns a local (``assign``), or is a *chunk operation* (``chunk``: a warp
intrinsic, a barrier reduction, a device-function call, a NumPy math function, a trap) that needs whole lane
vectors. Effects happen only where the op's *guard* holds: the statement's mask, narrowed by the conditions
of the ``and``/``or``/``if-else`` expressions around it (the lanes back end's sub-masks); pure values are
computed on every lane, as the lanes back end computes them over whole vectors.

Values are code text. A temporary is named by a marker (``\\x01T12\\x02``) that the region emitter
(``regions.py``) replaces by a local of the lane loop, or by a lane array when the value crosses a region.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...ir import nodes as N
from ...ir.nodes import Uni
from ...ir.types import BOOL, Array, Scalar, Tuple
from . import values as V
from .values import NotCompiled

MARK = re.compile("\x01(T[0-9]+)\x02")

#: math functions that are not floating-point work for FLOP counting (as ``backends.lanes.expressions``)
NOT_FLOPS = {"math.fabs", "math.floor", "math.ceil", "math.trunc", "math.isnan", "math.isinf", "math.isfinite",
             "math.copysign", "math.frexp", "math.modf", "math.nextafter", "math.ldexp"}
FLOP_OF = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div"}

#: special registers per lane (arrays of the chunk) or per launch (scalars)
SPECIAL_CODE = {"threadIdx.x": "tx_[l]", "threadIdx.y": "ty_[l]", "threadIdx.z": "tz_[l]",
                "blockIdx.x": "bx_[l]", "blockIdx.y": "by_[l]", "blockIdx.z": "bz_[l]",
                "blockDim.x": "bdx_", "blockDim.y": "bdy_", "blockDim.z": "bdz_",
                "gridDim.x": "gdx_", "gridDim.y": "gdy_", "gridDim.z": "gdz_",
                "laneid": "ln_[l]", "warpsize": "np.int32(32)", "lanemask_lt": "lml_[l]"}


def temps_in(text: str) -> list[str]:
    return MARK.findall(text)


@dataclass
class ArrayRef:
    """An array value: a slot of the launch (``codegen.Slot``)."""

    slot: Any


@dataclass
class Site:
    """One access or faulting operation of the source, in one inlined copy of its function."""

    id: int
    kind: str                # "ld", "st", "atom", "red", "div", "tidx"
    line: int
    slot: Any = None
    keys: dict = field(default_factory=dict)
    uniform: Any = False     # atomics: the index is a NumPy scalar in the lanes back end (chunk-level code)
    grid_value: bool = False  # a GRID load whose value is read once per region


@dataclass
class Op:
    kind: str
    line: int
    dst: str | None = None
    type: Any = None
    code: str = ""
    guard: str | None = None
    flop: str | None = None
    site: Site | None = None
    args: dict = field(default_factory=dict)

    def reads(self) -> list[str]:
        out = temps_in(self.code)
        if self.guard:
            out += temps_in(self.guard)
        for v in self.args.values():
            for t in _texts(v):
                out += temps_in(t)
        return out


def _texts(v) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):
        return _texts(list(v.values()))
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            out += _texts(x)
        return out
    return []


def and_guard(g: str | None, c: str, negate: bool = False) -> str:
    """The guard ``g`` (None: the statement's mask, ``act``) narrowed by ``c``."""
    term = f"(not {c})" if negate else c
    return f"(act and {term})" if g is None else f"({g} and {term})"


class Flattener:
    """Expression flattening; the code generator provides ``temp``, ``site``, ``emit_op``, ``var_code``,
    ``array_of``, ``instrument`` and ``fn`` (the function instance being generated)."""

    # -- helpers --------------------------------------------------------------------------------------------
    def value_op(self, code: str, t: Scalar, line: int, guard: str | None = None, flop: str | None = None) -> str:
        """Bind ``code`` to a fresh temporary (so it is computed once), returning its marker."""
        name = self.temp(t)
        self.emit_op(Op("val", line, name, t, code, guard, flop))
        return f"\x01{name}\x02"

    def materialize(self, v: str, t: Scalar, line: int) -> str:
        """``v`` as a temporary (a chunk operation reads it as a lane array)."""
        if re.fullmatch("\x01T[0-9]+\x02", v):
            return v
        return self.value_op(v, t, line)

    def flop_name(self, op: str, t) -> str | None:
        if self.instrument and isinstance(t, Scalar) and t.is_float:
            return op
        return None

    # -- expressions ----------------------------------------------------------------------------------------
    def expr(self, e: N.Expr, g: str | None):
        """The per-lane value of ``e`` (code text, a tuple of values, or an ``ArrayRef``)."""
        if isinstance(e, N.Const):
            return V.const(e.value, e.type)
        if isinstance(e, N.Var):
            return self.var_code(e)
        if isinstance(e, N.Special):
            return SPECIAL_CODE[e.name]
        if isinstance(e, N.Cast):
            if isinstance(e.type, Tuple):
                raise NotCompiled("conversions of tuples are not compiled")
            x = self.expr(e.value, g)
            return self.value_op(V.cast(x, e.value.type, e.type), e.type, e.line)
        if isinstance(e, N.Unary):
            x = self.expr(e.operand, g)
            return self.value_op(V.unary(e.op, x, e.type), e.type, e.line)
        if isinstance(e, N.Binary):
            return self.binary(e, g)
        if isinstance(e, N.Compare):
            a = self.expr(e.left, g)
            b = self.expr(e.right, g)
            return self.value_op(V.compare(e.op, a, b), BOOL, e.line)
        if isinstance(e, N.Logical):
            return self.logical(e, g)
        if isinstance(e, N.Select):
            return self.select(e, g)
        if isinstance(e, N.Let):
            value = self.expr(e.value, g)
            self.assign_var(e.name, e.value.type, value, e.line, True, e.value)
            return self.expr(e.body, g)
        if isinstance(e, N.MakeTuple):
            return tuple(self.expr(i, g) for i in e.items)
        if isinstance(e, N.TupleItem):
            v = self.expr(e.value, g)
            if not isinstance(v, tuple):
                raise NotCompiled("an item of a non-tuple value")
            return v[e.index]
        if isinstance(e, N.TupleIndex):
            return self.tuple_index(e, g)
        if isinstance(e, N.Trap):
            self.chunk_op("trap", e.line, g, message=e.message)
            return V.zero(e.type)
        if isinstance(e, N.ConstArray):
            return ArrayRef(self.const_slot(e))
        if isinstance(e, N.Load):
            return self.load(e, g)
        if isinstance(e, N.ArrayShape):
            return self.array_shape(self.expr(e.array, g), e.dim)
        if isinstance(e, N.ArraySize):
            return self.array_size(self.expr(e.array, g))
        if isinstance(e, N.Intrinsic):
            return self.intrinsic(e, g)
        if isinstance(e, N.Fma):
            a, b, c = (self.expr(x, g) for x in (e.a, e.b, e.c))
            return self.value_op(V.fma(a, b, c, e.type), e.type, e.line, g, self.flop_name("fma", e.type))
        if isinstance(e, N.Call):
            return self.call(e, g)
        if isinstance(e, N.Atomic):
            return self.atomic(e, g)
        if isinstance(e, (N.Shuffle, N.Vote, N.Match, N.ActiveMask, N.BarrierReduce)):
            return self.warp_op(e, g)
        raise NotCompiled(f"{type(e).__name__} expressions are not compiled")

    def binary(self, e: N.Binary, g: str | None) -> str:
        a = self.expr(e.left, g)
        b = self.expr(e.right, g)
        t: Scalar = e.type
        op = e.op
        if op in ("floordiv", "mod") and t.is_int:
            r = e.right
            if isinstance(r, N.Const) and r.value != 0:
                return self.value_op(V.int_divide(op, a, b, t), t, e.line)
            site = self.site("div", e.line, None)
            site.keys["zero"] = self.fault_key("KernelError", e.line, None, ())
            name = self.temp(t)
            self.emit_op(Op("div", e.line, name, t, "", g, site=site, args={"a": a, "b": b, "op": op}))
            return f"\x01{name}\x02"
        if op == "pow":
            if t.is_int:
                return self.value_op(V.binary(op, a, b, t), t, e.line)
            if e.right.type.is_int:
                scalar_path = e.left.uni == Uni.GRID and e.right.uni == Uni.GRID
                return self.value_op(V.fpow_int(a, b, t, scalar_path), t, e.line, g, self.flop_name("special", t))
            return self.math_op("float_pow", [a, b], [e.left, e.right], t, e.line, g,
                                self.flop_name("special", t))
        return self.value_op(V.binary(op, a, b, t), t, e.line, g, self.flop_name(FLOP_OF.get(op, ""), t)
                             if op in FLOP_OF else None)

    def logical(self, e: N.Logical, g: str | None):
        """``left and right`` / ``left or right``: ``right`` has effects only where ``left`` does not decide."""
        is_and = e.op == "and"
        left = self.expr(e.left, g)
        lt = e.left.type
        c = left if lt == BOOL else self.value_op(f"({left} != 0)", BOOL, e.line)
        c = self.materialize(c, BOOL, e.line) if not re.fullmatch("\x01T[0-9]+\x02", c) else c
        gr = self.value_op(and_guard(g, c, negate=not is_and), BOOL, e.line)
        right = self.expr(e.right, gr)
        if e.type == BOOL:
            return self.value_op(f"({c} {'and' if is_and else 'or'} {right})", BOOL, e.line)
        taken, kept = (right, left) if is_and else (left, right)
        return self.value_op(f"({taken} if {c} else {kept})", e.type, e.line)

    def select(self, e: N.Select, g: str | None):
        cond = self.expr(e.cond, g)
        c = self.materialize(cond, BOOL, e.line)
        gt = self.value_op(and_guard(g, c), BOOL, e.line)
        a = self.expr(e.then, gt)
        gf = self.value_op(and_guard(g, c, negate=True), BOOL, e.line)
        b = self.expr(e.orelse, gf)
        return self.pick(c, a, b, e.type, e.line)

    def pick(self, c: str, a, b, t, line: int):
        if isinstance(t, Tuple):
            return tuple(self.pick(c, x, y, it, line) for x, y, it in zip(a, b, t.items))
        return self.value_op(f"({a} if {c} else {b})", t, line)

    def tuple_index(self, e: N.TupleIndex, g: str | None) -> str:
        items = self.expr(e.value, g)
        k = self.expr(e.index, g)
        if not isinstance(items, tuple) or any(isinstance(i, tuple) for i in items):
            raise NotCompiled("indexing a tuple of tuples is not compiled")
        site = self.site("tidx", e.line, None)
        site.keys["oob"] = self.fault_key("OutOfBounds", e.line, None, ())
        site.keys["n"] = len(items)
        name = self.temp(e.type)
        self.emit_op(Op("tidx", e.line, name, e.type, "", g, site=site,
                        args={"items": list(items), "k": k, "grid": e.index.uni == Uni.GRID}))
        return f"\x01{name}\x02"

    def intrinsic(self, e: N.Intrinsic, g: str | None):
        args = [self.expr(a, g) for a in e.args]
        name = e.name
        flop = self.flop_name("special", e.type) if name.startswith("math.") and name not in NOT_FLOPS else None
        if name in V.EXACT_INTRINSICS:
            code = V.intrinsic(name, args, [a.type for a in e.args], e.type)
            return self.value_op(code, e.type, e.line, g, flop)
        if name not in V.NUMPY_INTRINSICS:
            raise NotCompiled(f"the intrinsic {name} is not compiled")
        return self.math_op(name, args, e.args, e.type, e.line, g, flop)

    def math_op(self, name: str, args: list, nodes: list[N.Expr], t, line: int, g: str | None, flop):
        """A NumPy function over whole lane vectors, exactly as the lanes back end calls it (GRID arguments
        as NumPy scalars)."""
        ins = [self.materialize(a, n.type, line) for a, n in zip(args, nodes)]
        scalars = [n.uni == Uni.GRID for n in nodes]
        outs = [self.temp(it) for it in (t.items if isinstance(t, Tuple) else (t,))]
        self.chunk_op("math", line, g, name=name, ins=ins, scalars=scalars, outs=outs, type=t, flop=flop,
                      arg_types=[n.type for n in nodes])
        vals = tuple(f"\x01{o}\x02" for o in outs)
        return vals if isinstance(t, Tuple) else vals[0]

    def warp_op(self, e: N.Expr, g: str | None):
        ins = {}
        for fname in ("mask", "value", "lane", "predicate"):
            sub = getattr(e, fname, None)
            if sub is not None:
                v = self.expr(sub, g)
                ins[fname] = (self.materialize(v, sub.type, e.line), sub)
        t = e.type
        outs = [self.temp(it) for it in (t.items if isinstance(t, Tuple) else (t,))]
        self.chunk_op(type(e).__name__.lower(), e.line, g, node=e, ins=ins, outs=outs)
        vals = tuple(f"\x01{o}\x02" for o in outs)
        return vals if isinstance(t, Tuple) else vals[0]

    # -- arrays ---------------------------------------------------------------------------------------------
    def index_codes(self, e, g) -> tuple[Any, list[str]]:
        arr = self.expr(e.array, g)
        if not isinstance(arr, ArrayRef):
            raise NotCompiled("an array that is not known when the kernel is compiled")
        idx = []
        for i in e.index:
            v = self.expr(i, g)
            if isinstance(v, tuple):
                raise NotCompiled("indexing with a tuple value is not compiled")
            idx.append(v)
        if len(idx) != arr.slot.ndim:
            raise NotCompiled(f"array {arr.slot.name!r} indexed with {len(idx)} of its {arr.slot.ndim} dimensions")
        return arr, idx

    def load(self, e: N.Load, g: str | None) -> str:
        arr, idx = self.index_codes(e, g)
        site = self.access_site("ld", e.line, arr.slot, "read")
        site.grid_value = e.uni == Uni.GRID and arr.slot.space in ("global", "const")
        name = self.temp(e.type)
        self.emit_op(Op("load", e.line, name, e.type, "", g, site=site, args={"idx": idx, "index_nodes": e.index}))
        return f"\x01{name}\x02"

    def atomic(self, e: N.Atomic, g: str | None) -> str:
        arr, idx = self.index_codes(e, g)
        val = self.expr(e.value, g)
        cmp = self.expr(e.compare, g) if e.compare is not None else None
        site = self.access_site("atom" if e.result_used else "red", e.line, arr.slot, "atomic")
        site.uniform = self.lanes_scalar_all(e.index)
        name = self.temp(e.type)
        self.emit_op(Op("atomic", e.line, name, e.type, "", g, site=site,
                        args={"idx": idx, "value": val, "cmp": cmp, "op": e.op}))
        return f"\x01{name}\x02"

    def store(self, s: N.Store, g: str | None) -> None:
        arr, idx = self.index_codes(s, g)
        val = self.expr(s.value, g)
        site = self.access_site("st", s.line, arr.slot, "write")
        self.emit_op(Op("store", s.line, None, s.value.type, "", g, site=site, args={"idx": idx, "value": val}))

    def array_shape(self, arr, dim: int) -> str:
        if not isinstance(arr, ArrayRef):
            raise NotCompiled("the shape of an array that is not known when the kernel is compiled")
        return arr.slot.shape_code(dim)

    def array_size(self, arr) -> str:
        if not isinstance(arr, ArrayRef):
            raise NotCompiled("the size of an array that is not known when the kernel is compiled")
        return arr.slot.size_code()

    # -- statements ---------------------------------------------------------------------------------------
    def simple_stmt(self, s: N.Stmt, g: str | None) -> None:
        if isinstance(s, N.Assign):
            if isinstance(s.value.type, Array):
                self.alias_array(s.target, self.expr(s.value, g), s.line)
                return
            value = self.expr(s.value, g)
            self.assign_var(s.target, s.value.type, value, s.line, s.target.startswith("$"), s.value)
        elif isinstance(s, N.Store):
            self.store(s, g)
        elif isinstance(s, N.ExprStmt):
            self.expr(s.value, g)
        else:  # pragma: no cover
            raise NotCompiled(f"{type(s).__name__} statements are not compiled")
