"""The compiled back end's code generator: a kernel's IR -> the Python source of two ``numba.njit`` functions.

``chunk(b0, nb, ...)`` runs one chunk of blocks; ``run(...)`` runs every chunk. The chunk function's control
flow is the lanes back end's (``gpusim.backends.lanes.codegen``) statement for statement: the same masks,
loops, step counts, barrier checks and early exits, so everything the lanes back end decides per chunk is
decided identically here. Where the lanes back end computes a NumPy expression over lane vectors, this
back end flattens the statements (``flatten.py``) and runs them as loops over the lanes (``regions.py``),
warp intrinsics and calls between them (``chunkops.py``). Device functions are inlined at each call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir import nodes as N
from ...ir.nodes import Uni
from ...ir.types import Array, Scalar, Tuple
from ...ir.unroll import plan_loops
from ...ir.walk import children, walk_exprs, walk_stmts
from ..lanes.codegen import exits_in
from ..lanes.work import OVERHEAD, iteration, straight_line
from .analysis import lanes_scalar, maybe_unassigned
from .chunkops import ChunkOps
from .flatten import ArrayRef, Flattener, Op, Site
from .layout import FK_TIMEOUT, FK_ZEROSTEP, I_ABORT, I_ALOG, I_STATIC, I_STEPS
from .naming import clean as _clean
from .regions import RegionEmitter
from .slots import Slot
from .values import NotCompiled, ctor

DEAD = True
#: why an instrumented launch of a kernel with a loop the compiler unrolls at run time is not compiled
UNROLLED = ("it has a per-lane range loop the GPU's compiler unrolls at run time (gpusim.ir.unroll), whose requests "
            "and latency rounds the compiled back end does not regroup yet (instrument=False runs it compiled)")


class Ctx:
    def __init__(self, mask: str, partial: bool, loop: dict | None):
        self.mask = mask
        self.partial = partial
        self.loop = loop


@dataclass
class Inst:
    """One function being generated: the kernel, or one inlined call of a device function."""

    fn: N.Function
    prefix: str
    kernel: bool
    arrays: dict[str, Slot]
    done: str
    masked_return: bool
    maybe: set[int]
    exit_flag: str | None = None      # an inlined function's GRID return: set, then leave its loops
    rv: str | None = None             # the return value's storage
    rv_grid: bool = False
    env: dict | None = None           # an expression-inlined function: its locals' values



class KernelGen(Flattener, RegionEmitter, ChunkOps):
    def __init__(self, module: N.Module, alias: tuple[int, ...], instrument: bool, trace: bool):
        self.module = module
        self.instrument = instrument
        if instrument and any(plan_loops(fn) for fn in module.functions.values()):
            raise NotCompiled(UNROLLED)
        self.trace = trace and instrument
        self.slots: list[Slot] = []
        self.sites: list[Site] = []
        self.keys: dict[tuple, int] = {}
        self.race_keys: dict[tuple, int] = {}
        self.temp_types: dict[str, Scalar] = {}
        self.lines: list[str] = []
        self.indent = 1
        self.pending: list[Op] = []
        self.pending_mask: str | None = None
        self.lane_arrays: dict[str, np.dtype] = {}
        self.n = 0
        self.inst: Inst | None = None
        self.n_inst = 0
        self.messages: list[str] = []         # trap messages
        self.var_names: list[str] = []        # GRID locals a fault can name
        self.states: set[str] = set()
        self.grid_vars: dict[str, Scalar] = {}
        self.max_region_sites = 0
        self.arrays_now: set[str] = set()
        self.region_sites: dict = {}
        self.consts: dict[int, Slot] = {}
        self.nlines = len(module.lines) + 2
        self.dtypes: set[str] = set()
        self.site_rows: dict[int, list[int]] = {}
        self.round_sites: dict[tuple[int, int], int] = {}   # (slot, line) -> the latency rounds' load site
        entry = module.entry
        self.param_slots: dict[int, Slot] = {}
        self.scalar_params: list[tuple[int, str]] = []
        for i, p in enumerate(entry.params):
            if isinstance(p.type, Array):
                first = alias[i]
                if first in self.param_slots:
                    self.param_slots[i] = self.param_slots[first]
                    self.param_slots[first].params.append(i)
                    continue
                t = p.type
                slot = self.new_slot("param", p.name, t.dtype, t.ndim, "global", layout=t.layout)
                slot.params.append(i)
                self.param_slots[i] = slot
            else:
                if not isinstance(p.type, Scalar):
                    raise NotCompiled(f"parameter {p.name!r} of type {p.type} is not compiled")
                ctor(p.type)
                self.scalar_params.append((i, f"s{i}"))

    # -- services ---------------------------------------------------------------------------------------------
    def new_slot(self, kind, name, dtype, ndim, space, **kw) -> Slot:
        ctor(dtype)
        slot = Slot(len(self.slots), kind, name, dtype, ndim, space, **kw)
        self.slots.append(slot)
        return slot

    def line(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    def tmp(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def temp(self, t) -> str:
        if not isinstance(t, Scalar):
            raise NotCompiled(f"values of type {t} are not compiled")
        ctor(t)
        self.n += 1
        name = f"T{self.n}"
        self.temp_types[name] = t
        return name

    def lane_array(self, name: str, t: Scalar) -> None:
        self.lane_arrays[name] = t

    def mask_array(self) -> str:
        name = self.tmp("m")
        self.lane_arrays[name] = Scalar("bool")
        return name

    def fault_key(self, kind: str, line: int, array: str | None, extra: tuple) -> int:
        key = (kind, line, array, extra)
        if key not in self.keys:
            self.keys[key] = len(self.keys)
        return self.keys[key]

    def site(self, kind: str, line: int, slot) -> Site:
        s = Site(len(self.sites), kind, line, slot)
        self.sites.append(s)
        return s

    def access_site(self, kind: str, line: int, slot: Slot, access: str) -> Site:
        s = self.site(kind, line, slot)
        slot.kinds.add(kind)
        s.keys["oob"] = self.fault_key("OutOfBounds", line, slot.name, (access,))
        if kind != "st" and (slot.space == "shared" or slot.space == "local"):
            s.keys["uninit"] = self.fault_key("UninitializedRead", line, slot.name, ())
        if slot.space in ("global", "shared"):
            rk = (line, slot.name)
            if rk not in self.race_keys:
                self.race_keys[rk] = len(self.race_keys)
            s.keys["race"] = self.race_keys[rk]
        return s

    def emit_op(self, op: Op) -> None:
        self.pending.append(op)

    def flush(self) -> None:
        if self.pending:
            ops, self.pending = self.pending, []
            self.emit_ops(ops, self.pending_mask)

    def begin(self, ctx: Ctx) -> None:
        """Start collecting operations executed under ``ctx``'s mask."""
        if self.pending and self.pending_mask != ctx.mask:
            self.flush()
        self.pending_mask = ctx.mask

    # -- locals ----------------------------------------------------------------------------------------------
    def key(self, name: str, t) -> str:
        return f"{self.inst.prefix}{_clean(name)}__{t}"

    def level(self, name: str) -> Uni:
        return self.inst.fn.var_uni.get(name, Uni.GRID)

    def state_name(self, name: str) -> str:
        s = f"S_{self.inst.prefix}{_clean(name)}"
        self.states.add(s)
        return s

    def var_code(self, e: N.Var):
        if self.inst.env is not None and e.name in self.inst.env:
            return self.inst.env[e.name]
        if e.name in self.inst.arrays:
            return ArrayRef(self.inst.arrays[e.name])
        t = e.type
        if isinstance(t, Array):
            raise NotCompiled(f"the array {e.name!r} is not known when the kernel is compiled")
        if id(e) in self.inst.maybe and self.level(e.name) > Uni.GRID:
            self.emit_op(Op("check", e.line, args={"state": self.state_name(e.name)}))
        elif id(e) in self.inst.maybe:
            self.emit_op(Op("check", e.line, args={"assigned": f"A_{self.key(e.name, 'x')}", "name": e.name}))
        return self.var_value(e.name, t)

    def var_value(self, name: str, t):
        if isinstance(t, Tuple):
            return tuple(self.var_value(f"{name}.{k}", it) for k, it in enumerate(t.items))
        ctor(t)
        if self.level(name.split(".")[0]) == Uni.GRID:
            k = f"g_{self.key(name, t)}"
            self.grid_vars[k] = t
            return k
        k = f"v_{self.key(name, t)}"
        self.lane_arrays[k] = t
        return f"{k}[l]"

    def assign_var(self, name: str, t, value, line: int, temp: bool, node: N.Expr) -> None:
        """``name = value`` for a lane local (GRID locals are assigned at chunk level, ``grid_assign``)."""
        if self.level(name) == Uni.GRID:
            raise NotCompiled(f"the uniform local {name!r} assigned inside an expression")
        state = self.state_name(name)
        rs = lanes_scalar(node, self.state_of)
        self.emit_op(Op("assign", line, None, t, "", None, args={
            "name": name, "t": t, "value": value, "temp": temp or not self.cur_ctx.partial, "state": state,
            "rs": rs}))

    def lanes_scalar_all(self, nodes) -> object:
        """Are all of ``nodes`` NumPy scalars in the lanes back end (an index its ``_locate`` calls uniform)?"""
        from .analysis import both
        r = True
        for n in nodes:
            r = both(r, lanes_scalar(n, self.state_of))
        return r

    def state_of(self, name: str):
        if self.level(name) == Uni.GRID:
            return True
        return f"({self.state_name(name)} == 1)"

    def assign_prologue(self, op: Op) -> None:
        a = op.args
        rs = a["rs"]
        rs_code = "1" if rs is True else "2" if rs is False else f"(1 if {rs} else 2)"
        if a["temp"]:
            self.line(f"{a['state']} = {rs_code}")
        else:
            nx = self.tmp("nx")
            a["nx"] = nx
            self.line(f"{nx} = {a['state']} == 0")
            self.line(f"{a['state']} = {rs_code} if {nx} else 2")

    def assign_lane(self, op: Op) -> None:
        a = op.args

        def one(name, t, value):
            if isinstance(t, Tuple):
                for k, (it, v) in enumerate(zip(t.items, value)):
                    one(f"{name}.{k}", it, v)
                return
            target = self.rv_value(name, t, False) if a.get("rv") else self.var_value(name, t)
            code = f"{target} = {self.render(value) if isinstance(value, str) else value}"
            if a["temp"]:
                self.line(code)
            else:
                self.line(f"if act or {a['nx']}:")
                self.line(f"    {code}")
        one(a["rv"] if a.get("rv") else a["name"], a["t"], a["value"])

    def alias_array(self, name: str, value, line: int) -> None:
        if not isinstance(value, ArrayRef):
            raise NotCompiled(f"the array {name!r} is not known when the kernel is compiled")
        prev = self.inst.arrays.get(name)
        if prev is not None and prev is not value.slot:
            raise NotCompiled(f"the array variable {name!r} names different arrays")
        self.inst.arrays[name] = value.slot

    def const_slot(self, e: N.ConstArray) -> Slot:
        slot = self.consts.get(id(e.data))
        if slot is None:
            slot = self.new_slot("const", e.name, e.type.dtype, e.type.ndim, "const", shape=tuple(e.data.shape),
                                 const_data=e.data)
            self.consts[id(e.data)] = slot
        return slot

    # -- scalar (GRID) values at chunk level ---------------------------------------------------------------
    def scalar(self, e: N.Expr, ctx: Ctx) -> str:
        """The value of a GRID expression at chunk level (its effects: every active lane of ``ctx``)."""
        self.flush()
        self.cur_ctx = ctx
        self.cur_value = None
        ops_before = len(self.pending)
        self.pending_mask = ctx.mask
        v = self.expr(e, None)
        ops = self.pending[ops_before:]
        self.pending = self.pending[:ops_before]
        if isinstance(v, tuple):
            raise NotCompiled("a tuple where a number is needed")
        t = e.type
        out = self.tmp("sv")
        self.grid_vars[out] = t
        pure = all(op.kind == "val" and not op.flop for op in ops)
        if pure:
            for op in ops:
                self.line(f"{op.dst} = {self.render_scalar(op.code)}")
            self.line(f"{out} = {self.render_scalar(v)}")
            return out
        if any(op.kind in ("chunk", "check") for op in ops):
            # keep the lanes back end's order: the chunk operations run, then the value is read from lane 0
            name = self.temp(t)
            ops.append(Op("val", e.line, name, t, v))
            self.emit_ops(ops, ctx.mask, keep=(name,))
            self.lane_array(f"{name}_a", t)
            self.line(f"{out} = {name}_a[0]")
            return out
        # every lane computes the same value; effects (loads, faults, flops) only where the mask holds
        name = self.temp(t)
        ops.append(Op("val", e.line, name, t, v))
        self.arrays_now = {name}
        self.lane_array(f"{name}_a", t)
        self.region(ops, ctx.mask, hoist=False)
        self.line(f"fl_ = X.first_lane({ctx.mask}.ctypes, N)")
        self.line(f"{out} = {name}_a[fl_ if fl_ >= 0 else 0]")
        return out

    def render_scalar(self, text: str) -> str:
        from .flatten import MARK
        return MARK.sub(lambda m: m.group(1), text)

    def grid_assign(self, s: N.Assign, ctx: Ctx) -> None:
        v = self.scalar(s.value, ctx)
        k = f"g_{self.key(s.target, s.value.type)}"
        self.grid_vars[k] = s.value.type
        self.line(f"{k} = {v}")
        self.line(f"A_{self.key(s.target, 'x')} = True")
        self.grid_vars[f"A_{self.key(s.target, 'x')}"] = Scalar("bool")

    # -- function bodies -------------------------------------------------------------------------------------
    def exits_in(self, node: N.Stmt) -> tuple[bool, bool, bool]:
        return exits_in(node)      # the lanes back end's rule: the same masks

    def grid_exit_in(self, node: N.Stmt) -> bool:
        """Does a GRID return of an inlined function sit inside ``node``?"""
        if self.inst.exit_flag is None:
            return False
        return any(isinstance(s, N.Return) and s.uni == Uni.GRID for s in walk_stmts([node]))

    def mask_op(self, ctx: Ctx, code: str, any_flag: str | None = None) -> str:
        """A new mask: ``code`` per lane (``act`` is ``ctx.mask[l]``), in the pending region."""
        m = self.mask_array()
        self.begin(ctx)
        self.emit_op(Op("mask", 0, code=code, args={"dst": m, "any": any_flag}))
        return m

    def refresh_mask(self, node: N.Stmt, ctx: Ctx) -> None:
        ret, brk, cont = self.exits_in(node)
        if not (ret or brk or cont):
            return
        terms = ["act"]
        if ret:
            terms.append(f"not {self.inst.done}[l]")
        if brk and ctx.loop is not None:
            terms.append(f"not {ctx.loop['brk']}[l]")
        if cont and ctx.loop is not None:
            terms.append(f"not {ctx.loop['cnt']}[l]")
        ctx.mask = self.mask_op(ctx, " and ".join(terms))
        self.flush()

    def block(self, body: list[N.Stmt], ctx: Ctx) -> bool:
        for s in body:
            if self.stmt(s, ctx):
                return DEAD
        return False

    def stmt(self, s: N.Stmt, ctx: Ctx) -> bool:
        self.cur_ctx = ctx
        self.cur_value = None
        if (isinstance(s, N.Assign) and isinstance(s.value, N.Cast) and isinstance(s.value.value, N.Var)
                and s.value.value.name == s.target and id(s.value.value) in self.inst.maybe):
            # the front end's ``x = T(x)`` where paths join, on a path that may never have assigned x: the
            # lanes back end converts only what was assigned (``is_join_cast``); not translated here yet
            raise NotCompiled(f"the conversion of {s.target!r} where paths join (line {s.line}), on a path that "
                              "may not have assigned it, is not compiled yet")
        if isinstance(s, N.Assign) and not isinstance(s.value.type, Array) and self.level(s.target) == Uni.GRID:
            self.grid_assign(s, ctx)
        elif isinstance(s, (N.Assign, N.Store, N.ExprStmt)):
            self.begin(ctx)
            if isinstance(s, N.Assign):
                self.cur_value = s.value
            self.simple_stmt(s, None)
        elif isinstance(s, N.SharedDecl):
            self.flush()
            self.shared_decl(s)
        elif isinstance(s, N.LocalDecl):
            self.flush()
            self.local_decl(s)
        elif isinstance(s, N.If):
            self.if_stmt(s, ctx)
            self.refresh_mask(s, ctx)
        elif isinstance(s, N.ForRange):
            self.for_stmt(s, ctx)
            self.refresh_mask(s, ctx)
        elif isinstance(s, N.While):
            self.while_stmt(s, ctx)
            self.refresh_mask(s, ctx)
        elif isinstance(s, N.Break):
            self.flush()
            if s.uni > Uni.GRID:
                b = ctx.loop["brk"]
                self.lane_loop(f"{b}[l] = {b}[l] or {ctx.mask}[l]")
            else:
                self.line("break")
            return DEAD
        elif isinstance(s, N.Continue):
            self.flush()
            if s.uni > Uni.GRID:
                c = ctx.loop["cnt"]
                self.lane_loop(f"{c}[l] = {c}[l] or {ctx.mask}[l]")
            else:
                self.line("continue")
            return DEAD
        elif isinstance(s, N.Return):
            self.return_stmt(s, ctx)
            return DEAD
        elif isinstance(s, N.Barrier):
            self.flush()
            self.barrier(ctx.mask, s.line)
        elif isinstance(s, N.SyncWarp):
            self.begin(ctx)
            mask = self.materialize(self.expr(s.mask, None), s.mask.type, s.line)
            self.emit_op(Op("chunk", s.line, args={"what": "syncwarp", "ins": {"mask": (mask, s.mask)},
                                                   "outs": [], "guard": None}))
            self.flush()
        elif isinstance(s, N.Fence):
            pass
        elif isinstance(s, N.Print):
            raise NotCompiled("print() is not compiled")
        else:  # pragma: no cover
            raise NotCompiled(f"{type(s).__name__} statements are not compiled")
        return False

    def lane_loop(self, body: str) -> None:
        self.line("for l in range(N):")
        self.line(f"    {body}")

    def abort_check(self) -> None:
        self.line(f"if I[{I_ABORT}]:")
        self.line("    return TR, BLOG, BBLK")

    # -- control flow ------------------------------------------------------------------------------------------
    def if_stmt(self, s: N.If, ctx: Ctx) -> None:
        if s.uni == Uni.GRID:
            c = self.scalar(s.cond, ctx)
            self.line(f"if {c}:")
            self.indent += 1
            self.line("pass")
            self.block(s.body, Ctx(ctx.mask, ctx.partial, ctx.loop))
            self.flush()
            self.indent -= 1
            if s.orelse:
                self.line("else:")
                self.indent += 1
                self.line("pass")
                self.block(s.orelse, Ctx(ctx.mask, ctx.partial, ctx.loop))
                self.flush()
                self.indent -= 1
            if self.grid_exit_in(s):
                self.exit_check()
            return
        self.begin(ctx)
        c = self.materialize(self.expr(s.cond, None), s.cond.type, s.line)
        at, af = self.tmp("any"), self.tmp("any")
        self.line(f"{at} = False")
        self.line(f"{af} = False")
        self.grid_vars[at] = self.grid_vars[af] = Scalar("bool")
        mt = self.mask_op(ctx, f"act and {c}", at)
        mf = self.mask_op(ctx, f"act and not {c}", af) if s.orelse else None
        self.flush()
        self.line(f"if {at}:")
        self.indent += 1
        self.line("pass")
        self.block(s.body, Ctx(mt, True, ctx.loop))
        self.flush()
        self.indent -= 1
        if s.orelse:
            self.line(f"if {af}:")
            self.indent += 1
            self.line("pass")
            self.block(s.orelse, Ctx(mf, True, ctx.loop))
            self.flush()
            self.indent -= 1
        if self.grid_exit_in(s):
            self.exit_check()

    def exit_check(self) -> None:
        """After a construct holding an inlined function's GRID return: leave if it was taken."""
        self.line(f"if {self.inst.exit_flag}:")
        self.line("    break")

    def tick(self, line: int, mask: str, work=None) -> None:
        """Charge the step budget as the lanes back end's ``rt.tick`` does (``gpusim.backends.lanes.work``):
        ``work``'s fixed steps and its per-lane steps for every lane of the chunk; a loop's iteration when
        ``work`` is a loop node."""
        if isinstance(work, (N.ForRange, N.While)):
            work = iteration(work)
        key = self.fault_key("KernelTimeout", line, None, ())
        self.line(f"I[{I_STEPS}] += {work.fixed * OVERHEAD} + {work.lanes} * N")
        # ``and I[abort] == 0`` (always true here) works around a miscompile: without it numba/LLVM turned a
        # loop of scalar work with this early return into a crash at run time (``for k in range(n): s += k``)
        self.line(f"if I[{I_STEPS}] > MAXSTEPS and I[{I_ABORT}] == 0:")
        self.line(f"    fl_ = X.first_lane({mask}.ctypes, N)")
        self.line(f"    X.fault(DESC.ctypes, {key}, 1, {FK_TIMEOUT}, gt0 + fl_ if fl_ >= 0 else -1, 0, 0)")
        self.line(f"    I[{I_ABORT}] = 1")
        self.line("    return TR, BLOG, BBLK")

    def zero_step(self, line: int, lane: str) -> None:
        key = self.fault_key("KernelError", line, None, ())
        self.line(f"X.fault(DESC.ctypes, {key}, 1, {FK_ZEROSTEP}, gt0 + {lane}, 0, 0)")
        self.line(f"I[{I_ABORT}] = 1")
        self.line("return TR, BLOG, BBLK")

    def for_stmt(self, s: N.ForRange, ctx: Ctx) -> None:
        _refuse_scalar_loop(s)
        ret, _, _ = self.exits_in(s)
        vt = s.start.type
        if s.uni == Uni.GRID:
            start, stop, step = (self.scalar(x, ctx) for x in (s.start, s.stop, s.step))
            self.line(f"if {step} == 0:")
            self.indent += 1
            self.line(f"fl_ = X.first_lane({ctx.mask}.ctypes, N)")
            self.zero_step(s.line, "(fl_ if fl_ >= 0 else 0)")
            self.indent -= 1
            u = self.tmp("u")
            self.grid_vars[u] = vt
            self.line(f"for {u}_i in range(np.int64({start}), np.int64({stop}), np.int64({step})):")
            self.indent += 1
            self.line(f"{u} = {ctor(vt)}({u}_i)")
            self.tick(s.line, ctx.mask, s)
            inner = self.grid_loop_ctx(ctx, ret)
            self.store_loop_var(s.var, u, vt, inner, s.line)
            self.block(s.body, inner)
            self.flush()
            self.indent -= 1
            if self.grid_exit_in(s):
                self.exit_check()
            return
        info = {"brk": self.mask_array(), "cnt": self.mask_array()}
        iv = self.tmp("iv")
        stp, stopv = self.tmp("st"), self.tmp("stop")
        for name in (iv, stp, stopv):
            self.lane_array(name, vt)
        self.cur_ctx = ctx
        self.begin(ctx)
        start = self.materialize(self.expr(s.start, None), vt, s.line)
        stop = self.materialize(self.expr(s.stop, None), vt, s.line)
        step = self.materialize(self.expr(s.step, None), vt, s.line)
        self.emit_op(Op("raw", s.line, code=f"{iv}[l] = {start}; {stp}[l] = {step}; {stopv}[l] = {stop}; "
                                            f"{info['brk']}[l] = False"))
        self.flush()
        # a zero step on an active lane (or, for a step the same everywhere, whether or not one is active)
        if s.step.uni == Uni.GRID:
            self.line(f"if {stp}[0] == 0:")
            self.indent += 1
            self.line(f"fl_ = X.first_lane({ctx.mask}.ctypes, N)")
            self.zero_step(s.line, "(fl_ if fl_ >= 0 else 0)")
            self.indent -= 1
        else:
            self.line("for l in range(N):")
            self.indent += 1
            self.line(f"if {ctx.mask}[l] and {stp}[l] == 0:")
            self.indent += 1
            self.zero_step(s.line, "l")
            self.indent -= 2
        lm = self.mask_array()
        self.lane_loop(f"{lm}[l] = {ctx.mask}[l]")
        self.line("while True:")
        self.indent += 1
        self.tick(s.line, lm, s)
        done = f" and not {self.inst.done}[l]" if ret else ""
        self.line("anym_ = False")
        self.line("for l in range(N):")
        self.line(f"    {lm}[l] = {lm}[l] and (({iv}[l] < {stopv}[l]) if {stp}[l] > 0 else ({iv}[l] > {stopv}[l])) "
                  f"and not {info['brk']}[l]{done}")
        self.line(f"    anym_ = anym_ or {lm}[l]")
        self.line("if not anym_:")
        self.line("    break")
        inner = Ctx(lm, True, info)
        self.store_loop_var(s.var, f"{iv}[l]", vt, inner, s.line, lane=True,
                            rs_start=lanes_scalar(s.start, self.state_of))
        self.lane_loop(f"{info['cnt']}[l] = False")
        self.block(s.body, inner)
        self.flush()
        self.line("for l in range(N):")
        self.line(f"    {iv}[l] = {ctor(vt)}({iv}[l] + {stp}[l])")
        self.indent -= 1
        if self.grid_exit_in(s):
            self.exit_check()

    def store_loop_var(self, name: str, value: str, t, ctx: Ctx, line: int, lane: bool = False,
                       rs_start=False) -> None:
        """``store_name`` of the lanes back end for a loop variable."""
        if self.level(name) == Uni.GRID:
            k = f"g_{self.key(name, t)}"
            self.grid_vars[k] = t
            self.line(f"{k} = {value}")
            self.line(f"A_{self.key(name, 'x')} = True")
            self.grid_vars[f"A_{self.key(name, 'x')}"] = Scalar("bool")
            return
        self.cur_ctx = ctx
        self.cur_value = None
        self.begin(ctx)
        st = self.state_name(name)
        temp = not ctx.partial
        self.emit_op(Op("assign", line, None, t, "", None, args={
            "name": name, "t": t, "value": value, "temp": temp, "state": st,
            "rs": rs_start if lane else True}))
        self.flush()

    def grid_loop_ctx(self, ctx: Ctx, ret: bool) -> Ctx:
        """The context of a GRID loop's body; where a ``return`` inside may leave lanes, each iteration starts
        by masking out the lanes that returned, and the loop ends when none is left."""
        inner = Ctx(ctx.mask, ctx.partial, None)
        if ret:
            mi = self.mask_array()
            self.line("anym_ = False")
            self.line("for l in range(N):")
            self.line(f"    {mi}[l] = {ctx.mask}[l] and not {self.inst.done}[l]")
            self.line(f"    anym_ = anym_ or {mi}[l]")
            self.line("if not anym_:")
            self.line("    break")
            inner.mask = mi
        return inner

    def while_stmt(self, s: N.While, ctx: Ctx) -> None:
        _refuse_scalar_loop(s)
        ret, _, _ = self.exits_in(s)
        if s.uni == Uni.GRID:
            self.flush()
            self.line("while True:")
            self.indent += 1
            self.tick(s.line, ctx.mask, s)
            inner = self.grid_loop_ctx(ctx, ret)
            c = self.scalar(s.cond, inner)
            # never a constant test: numba miscompiles (a crash at run time) a loop left only by ``return``
            # once its constant-true exit test is pruned (``while True: x += 1``)
            self.line(f"if not {c} or I[{I_ABORT}] != 0:")
            self.line("    break")
            self.block(s.body, inner)
            self.flush()
            self.indent -= 1
            if self.grid_exit_in(s):
                self.exit_check()
            return
        info = {"brk": self.mask_array(), "cnt": self.mask_array()}
        self.flush()
        lm = self.mask_array()
        self.lane_loop(f"{lm}[l] = {ctx.mask}[l]; {info['brk']}[l] = False")
        self.line("while True:")
        self.indent += 1
        self.tick(s.line, lm, s)
        done = f" and not {self.inst.done}[l]" if ret else ""
        self.lane_loop(f"{lm}[l] = {lm}[l] and not {info['brk']}[l]{done}")
        inner = Ctx(lm, True, info)
        self.cur_ctx = inner
        self.begin(inner)
        c = self.materialize(self.expr(s.cond, None), s.cond.type, s.line)
        self.line("anym_ = False")
        self.emit_op(Op("mask", s.line, code=f"act and {c}", args={"dst": lm, "any": "anym_"}))
        self.flush()
        self.line("if not anym_:")
        self.line("    break")
        self.lane_loop(f"{info['cnt']}[l] = False")
        self.block(s.body, inner)
        self.flush()
        self.indent -= 1
        if self.grid_exit_in(s):
            self.exit_check()

    def return_stmt(self, s: N.Return, ctx: Ctx) -> None:
        inst = self.inst
        masked = s.uni > Uni.GRID
        if inst.kernel:
            self.flush()
            if masked:
                self.lane_loop(f"{inst.done}[l] = {inst.done}[l] or {ctx.mask}[l]")
            else:
                self.line(f"{inst.exit_flag} = True")
                self.line("break")
            return
        if s.value is not None:
            self.cur_ctx = ctx
            self.begin(ctx)
            self.cur_value = s.value
            v = self.expr(s.value, None)
            self.return_value(v, s.value, ctx, masked)
        self.flush()
        if masked and inst.masked_return:
            self.lane_loop(f"{inst.done}[l] = {inst.done}[l] or {ctx.mask}[l]")
        else:
            self.line(f"{inst.exit_flag} = True")
            self.line("break")

    # -- declarations ----------------------------------------------------------------------------------------
    def shared_decl(self, s: N.SharedDecl) -> None:
        if s.dynamic:
            raise NotCompiled("dynamic shared memory is not compiled")
        slot = self.shared_slots.get(s.decl)
        if slot is None:
            slot = self.new_slot("shared", s.name, s.dtype, len(s.shape), "shared", shape=tuple(s.shape), decl=s.decl)
            self.shared_slots[s.decl] = slot
        self.inst.arrays[s.target] = slot
        size = slot.static_size
        k = slot.id
        self.line(f"if not mk{k}:")
        self.indent += 1
        self.line(f"mk{k} = True")
        self.line(f"{slot.data}[:nb * {size}] = 0")
        for what in ("w", "a", "r"):
            self.line(f"if {what}{k}.shape[0]:")
            self.line(f"    {what}{k}[:nb * {size}] = 0")
        self.line(f"if not REG[{k}]:")
        self.indent += 1
        self.line(f"REG[{k}] = True")
        self.line(f"ALOG[I[{I_ALOG}]] = {k}")
        self.line(f"I[{I_ALOG}] += 1")
        self.line(f"off_ = (I[{I_STATIC}] + 15) // 16 * 16")
        self.line(f"SHB[{k}] = off_")
        self.line(f"I[{I_STATIC}] = off_ + {size * slot.itemsize}")
        self.indent -= 2
        self.mk.add(f"mk{k}")

    def local_decl(self, s: N.LocalDecl) -> None:
        slot = self.local_slots.get(s.decl)
        if slot is None:
            slot = self.new_slot("local", s.name, s.dtype, len(s.shape), "local", shape=tuple(s.shape), decl=s.decl)
            self.local_slots[s.decl] = slot
        self.inst.arrays[s.target] = slot
        size = slot.static_size
        k = slot.id
        self.line(f"{slot.data}[:N * {size}] = 0")
        self.line(f"lw{k}[:N * {size}] = False")
        self.line(f"if not REG[{k}]:")
        self.line(f"    REG[{k}] = True")
        self.line(f"    ALOG[I[{I_ALOG}]] = {k}")
        self.line(f"    I[{I_ALOG}] += 1")

    # -- the kernel --------------------------------------------------------------------------------------------
    def generate(self) -> str:
        self.shared_slots: dict[int, Slot] = {}
        self.local_slots: dict[int, Slot] = {}
        self.mk: set[str] = set()
        fn = self.module.entry
        arrays = {p.name: self.param_slots[i] for i, p in enumerate(fn.params) if i in self.param_slots}
        self.inst = Inst(fn, "", True, arrays, "dn0", False, maybe_unassigned(fn), exit_flag="ex0")
        self.lane_arrays["dn0"] = Scalar("bool")
        self.grid_vars["ex0"] = Scalar("bool")
        self.cur_ctx = Ctx("ALL_", False, None)
        self.cur_value = None
        self.indent = 3
        self.body_start = len(self.lines)
        self.tick(fn.line, "ALL_", straight_line(fn.body))
        self.block(fn.body, Ctx("ALL_", False, None))
        self.flush()
        self.line("pass")
        return self.module_text()


#: what makes a loop's body more than scalar work
_WORK_STMTS = (N.Store, N.Barrier, N.SyncWarp, N.Print, N.SharedDecl, N.LocalDecl)
_WORK_EXPRS = (N.Load, N.Atomic, N.Call, N.Shuffle, N.Vote, N.Match, N.ActiveMask, N.BarrierReduce)


def _refuse_scalar_loop(loop: N.ForRange | N.While) -> None:
    """A uniform loop of only scalar work (no memory access, no call, no lane values) is not compiled: numba
    and LLVM have turned the step budget's early return in such a loop (``while True: x += 1``,
    ``for k in range(n): s += k``) into a crash at run time. The lanes back end runs it."""
    if loop.uni > Uni.GRID:
        return
    stmts = [loop, *walk_stmts(loop.body)]
    if any(isinstance(st, _WORK_STMTS) or getattr(st, "uni", Uni.GRID) > Uni.GRID for st in stmts):
        return
    if any(isinstance(e, _WORK_EXPRS) or e.uni > Uni.GRID for st in stmts for top in children(st)
           for e in walk_exprs(top)):
        return
    raise NotCompiled(f"the uniform loop at line {loop.line} does only scalar work, which the compiled back end "
                      "does not run yet (numba miscompiles its step budget check)")
