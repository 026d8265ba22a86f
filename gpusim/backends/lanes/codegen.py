"""Lanes back end: ``FunctionIR`` -> Python source over NumPy lane vectors.

The execution model (read this first)
-------------------------------------
* A **lane** is one CUDA thread. A chunk of whole blocks runs at once: lane ``k`` of a chunk is thread
  ``k % T`` of the chunk's block ``k // T`` (``T`` threads per block, numbered x-fastest), so the 32 lanes of a
  warp sit side by side.
* A **varying** value (thread index, anything computed from it, shared/local memory reads) is a NumPy vector
  with one entry per lane. A **uniform** value (literals, ``blockDim``, scalar arguments, loop counters of
  uniform loops, global reads at a uniform index) is a plain scalar, so uniform control flow stays plain
  Python and costs nothing per lane.
* A **mask** is a boolean lane vector: the lanes executing the current statement. A divergent ``if`` runs its
  body under ``mask & cond`` and its ``else`` under ``mask & ~cond``; a divergent loop runs until no lane is
  left in its mask; ``break``/``continue``/``return`` taken by some lanes remove them from the mask (for the
  rest of the iteration, the loop, or the function). Assignments under a partial mask merge
  (``np.where(mask, new, old)``); memory accesses touch only active lanes, so an index that would be out of
  bounds on a masked-off lane is harmless.
* A **barrier** (``syncthreads``) is legal only where every live (not yet returned) thread of the block is
  active; otherwise it is a ``BarrierDivergence`` fault. Lanes execute a statement together, so a barrier
  orders nothing by itself: the race tracker (``races.py``) records barrier epochs and flags any two
  unordered accesses to one element by different threads, at least one a write, not both atomic — lockstep
  execution never hides a race.
* Loops count steps; past the budget a ``KernelTimeout`` fault ends the launch.

Not supported (a compile-time ``UnsupportedConstruct`` names the construct and line): lists, dicts, strings,
comprehensions, lambdas, nested functions, classes, try/with/raise, recursion, ``for`` over anything but
``range``, array slicing, arrays chosen per thread, ``*args``, ``print``, a ``width`` argument to the
``shfl_*_sync`` functions (numba-cuda has none). Arithmetic follows numba-cuda's typing (``Runtime.binop``):
literals are int64/float64 and integer arithmetic widens to 64 bits. Dynamic shared arrays of different element
sizes alias in memory, but their race and initialisation records are kept per element size.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...ir.function import FunctionIR
from .expressions import BINOPS, Ctx, ExpressionGen, _is_mult


@dataclass
class Compiled:
    """Generated Python for one kernel (and the device functions it calls)."""

    name: str
    source: str            # the generated module text
    func: Any              # the kernel entry: func(rt, *args)
    line_map: dict[int, int]  # generated line -> kernel source line
    filename: str          # the kernel's file


class FunctionGen(ExpressionGen):
    def __init__(self, module: ModuleGen, ir: FunctionIR, fname: str, instrument: bool):
        self.mod = module
        self.ir = ir
        self.fname = fname
        self.instrument = instrument
        self.out: list[tuple[str, int]] = []
        self.indent = 1
        self.n = 0
        self.cur_line = ir.tree.lineno

    # -- helpers --------------------------------------------------------------------------------------
    def tmp(self, prefix: str = "_t") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, code: str) -> None:
        self.out.append(("    " * self.indent + code, self.cur_line))

    def var(self, name: str) -> str:
        return f"v_{name}"

    def const(self, value: Any) -> str:
        return self.mod.const(value)

    def exit_var(self) -> str:
        return "_done"

    # -- function -------------------------------------------------------------------------------------
    def generate(self) -> None:
        ir = self.ir
        params = [self.var(p) for p in ir.params]
        if ir.is_kernel:
            head = f"def {self.fname}(rt, {', '.join(params)}):" if params else f"def {self.fname}(rt):"
        else:
            head = f"def {self.fname}(rt, _m0{''.join(', ' + p for p in params)}):"
        self.out.append((head, ir.tree.lineno))
        self.emit("_tx, _ty, _tz, _bx, _by, _bz = rt.tx, rt.ty, rt.tz, rt.bx, rt.by, rt.bz")
        self.emit("_bdx, _bdy, _bdz, _gdx, _gdy, _gdz = rt.bdx, rt.bdy, rt.bdz, rt.gdx, rt.gdy, rt.gdz")
        self.emit("_lane, _ws = rt.laneid, rt.warpsize")
        if ir.is_kernel:
            self.emit("_m0 = rt.all_lanes")
            self.emit("_done = rt.no_lanes")
        else:
            self.emit("_done = rt.no_lanes")
            self.emit("_rv = None")
        for name in sorted(ir.varying - set(ir.params)):
            self.emit(f"{self.var(name)} = None")
        ctx = Ctx("_m0", False, None)
        self.block(ir.tree.body, ctx)
        if not ir.is_kernel:
            self.emit("return _rv")

    # -- statements -----------------------------------------------------------------------------------
    def block(self, body: list[ast.stmt], ctx: Ctx) -> None:
        for s in body:
            self.cur_line = s.lineno
            ended = self.stmt(s, ctx)
            if ended:
                return

    def exits_in(self, node: ast.AST) -> tuple[bool, bool, bool]:
        """(masked return, masked break, masked continue) inside ``node`` that escape it."""
        ret = brk = cont = False

        def walk(n: ast.AST, in_loop: bool) -> None:
            nonlocal ret, brk, cont
            for child in ast.iter_child_nodes(n):
                if isinstance(child, ast.Return) and id(child) in self.ir.masked_exits:
                    ret = True
                elif isinstance(child, ast.Break) and id(child) in self.ir.masked_exits and not in_loop:
                    brk = True
                elif isinstance(child, ast.Continue) and id(child) in self.ir.masked_exits and not in_loop:
                    cont = True
                elif isinstance(child, ast.stmt):
                    walk(child, in_loop or isinstance(child, (ast.For, ast.While)))

        if isinstance(node, (ast.For, ast.While)):
            walk(node, True)
        else:
            walk(node, False)
        return ret, brk, cont

    def refresh_mask(self, node: ast.AST, ctx: Ctx) -> None:
        ret, brk, cont = self.exits_in(node)
        if not (ret or brk or cont):
            return
        terms = [ctx.mask]
        if ret:
            terms.append("~_done")
        if brk and ctx.loop is not None:
            terms.append(f"~{ctx.loop['brk']}")
        if cont and ctx.loop is not None:
            terms.append(f"~{ctx.loop['cnt']}")
        new = self.tmp("_m")
        self.emit(f"{new} = {' & '.join(terms)}")
        ctx.mask = new

    def stmt(self, s: ast.stmt, ctx: Ctx) -> bool:
        """Generate one statement; True when the rest of the block is dead (all its lanes left)."""
        ir = self.ir
        if isinstance(s, ast.Pass):
            return False
        if isinstance(s, ast.Expr):
            self.expr(s.value, ctx, used=False)
            self.refresh_mask(s, ctx)
            return False
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            target = s.targets[0] if isinstance(s, ast.Assign) else s.target
            if isinstance(s, ast.AnnAssign) and s.value is None:
                return False
            self.assign(target, s.value, ctx)
            return False
        if isinstance(s, ast.AugAssign):
            self.augassign(s, ctx)
            return False
        if isinstance(s, ast.If):
            self.if_stmt(s, ctx)
            self.refresh_mask(s, ctx)
            return False
        if isinstance(s, ast.For):
            self.for_stmt(s, ctx)
            self.refresh_mask(s, ctx)
            return False
        if isinstance(s, ast.While):
            self.while_stmt(s, ctx)
            self.refresh_mask(s, ctx)
            return False
        if isinstance(s, ast.Break):
            if id(s) in ir.masked_exits:
                b = ctx.loop["brk"]
                self.emit(f"{b} = {b} | {ctx.mask}")
            else:
                self.emit("break")
            return True
        if isinstance(s, ast.Continue):
            if id(s) in ir.masked_exits:
                c = ctx.loop["cnt"]
                self.emit(f"{c} = {c} | {ctx.mask}")
            else:
                self.emit("continue")
            return True
        if isinstance(s, ast.Return):
            self.return_stmt(s, ctx)
            return True
        raise ir.error(s, f"{type(s).__name__} is not supported")  # pragma: no cover - frontend rejects

    def return_stmt(self, s: ast.Return, ctx: Ctx) -> None:
        ir = self.ir
        masked = id(s) in ir.masked_exits
        if ir.is_kernel:
            if masked:
                self.emit(f"_done = _done | {ctx.mask}")
                self.emit("rt.exited = _done")
            else:
                self.emit("return")
            return
        val = self.expr(s.value, ctx) if s.value is not None else "None"
        if ir.has_masked_return:
            if val != "None":
                self.emit(f"_rv = rt.merge({ctx.mask}, {val}, _rv)")
            if masked:
                self.emit(f"_done = _done | {ctx.mask}")
            else:
                self.emit("return _rv")
        else:
            self.emit(f"return {val}")

    def store_name(self, name: str, value: str, ctx: Ctx) -> None:
        v = self.var(name)
        if name in self.ir.varying:
            if ctx.partial:
                self.emit(f"{v} = rt.merge({ctx.mask}, {value}, {v})")
            else:
                self.emit(f"{v} = rt.lanes({value})")
        else:
            self.emit(f"{v} = {value}")

    def assign(self, target: ast.AST, value: ast.AST, ctx: Ctx) -> None:
        if isinstance(target, ast.Name):
            if target.id in self.ir.arrays:
                self.emit(f"{self.var(target.id)} = {self.array_decl(value, target.id, ctx)}")
                return
            self.store_name(target.id, self.expr(value, ctx), ctx)
        elif isinstance(target, ast.Tuple):
            if isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
                vals = []
                for tgt, e in zip(target.elts, value.elts):
                    t = self.tmp()
                    if isinstance(tgt, ast.Name) and tgt.id in self.ir.arrays:  # a, b = cuda.shared.array(..), ..
                        self.emit(f"{t} = {self.array_decl(e, tgt.id, ctx)}")
                    else:
                        self.emit(f"{t} = {self.expr(e, ctx)}")
                    vals.append(t)
            else:
                t = self.tmp()
                self.emit(f"{t} = {self.expr(value, ctx)}")
                self.emit(f"if len({t}) != {len(target.elts)}: rt.unpack_error({len(target.elts)}, len({t}))")
                vals = [f"{t}[{i}]" for i in range(len(target.elts))]
            for tgt, v in zip(target.elts, vals):
                if isinstance(tgt, ast.Name):
                    self.store_name(tgt.id, v, ctx)
                elif isinstance(tgt, ast.Subscript):
                    self.store_subscript(tgt, v, ctx)
                else:
                    raise self.ir.error(tgt, "nested tuple targets are not supported")
        elif isinstance(target, ast.Subscript):
            self.store_subscript(target, self.expr(value, ctx), ctx)

    def subscript_parts(self, node: ast.Subscript, ctx: Ctx) -> tuple[str, str]:
        arr = self.array_ref(node.value, ctx)
        sl = node.slice
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        idx = [self.expr(e, ctx) for e in elts]
        return arr, "(" + "".join(f"{i}, " for i in idx) + ")"

    def store_subscript(self, target: ast.Subscript, value: str, ctx: Ctx) -> None:
        arr, idx = self.subscript_parts(target, ctx)
        self.emit(f"rt.st({arr}, {ctx.mask}, {idx}, {value}, {target.lineno})")

    def augassign(self, s: ast.AugAssign, ctx: Ctx) -> None:
        op = BINOPS[type(s.op)]
        contract = isinstance(s.op, (ast.Add, ast.Sub)) and _is_mult(s.value)
        if isinstance(s.target, ast.Name):
            cur = self.var(s.target.id)
            if contract:
                new = self.mad_code(cur, s.op, s.value, ctx, product_left=False)
            else:
                new = self.binop_code(cur, op, self.expr(s.value, ctx), s.op, ctx, s.value)
            self.store_name(s.target.id, new, ctx)
        else:
            arr, idx = self.subscript_parts(s.target, ctx)
            t_idx = self.tmp()
            self.emit(f"{t_idx} = {idx}")
            old = self.tmp()
            self.emit(f"{old} = rt.ld({arr}, {ctx.mask}, {t_idx}, {s.lineno})")
            if contract:
                new = self.mad_code(old, s.op, s.value, ctx, product_left=False)
            else:
                new = self.binop_code(old, op, self.expr(s.value, ctx), s.op, ctx, s.value)
            self.emit(f"rt.st({arr}, {ctx.mask}, {t_idx}, {new}, {s.lineno})")

    def mad_code(self, left: str, op: ast.operator, right: ast.AST, ctx: Ctx, product_left: bool) -> str:
        """``x*y + z`` and friends: the GPU compiler contracts them into one fused multiply-add (one rounding),
        so gpusim does too (``rt.mad``). ``left`` is already generated; ``right`` is a node."""
        sub = isinstance(op, ast.Sub)
        if product_left:  # (x*y) +/- right
            prod = self.last_product
            c = self.expr(right, ctx)
            return f"rt.mad({prod[0]}, {prod[1]}, {c}, 1, {-1 if sub else 1}, {ctx.mask}, {self.cur_line})"
        x = self.expr(right.left, ctx)
        y = self.expr(right.right, ctx)
        return f"rt.mad({x}, {y}, {left}, {-1 if sub else 1}, 1, {ctx.mask}, {self.cur_line})"

    def if_stmt(self, s: ast.If, ctx: Ctx) -> None:
        cond = self.expr(s.test, ctx)
        if id(s) not in self.ir.divergent:
            self.emit(f"if {cond}:")
            self.indent += 1
            self.emit("pass")
            self.block(s.body, Ctx(ctx.mask, ctx.partial, ctx.loop))
            self.indent -= 1
            if s.orelse:
                self.emit("else:")
                self.indent += 1
                self.emit("pass")
                self.block(s.orelse, Ctx(ctx.mask, ctx.partial, ctx.loop))
                self.indent -= 1
            return
        c = self.tmp("_c")
        self.emit(f"{c} = rt.truth({cond})")
        mt = self.tmp("_m")
        self.emit(f"{mt} = {ctx.mask} & {c}")
        self.emit(f"if {mt}.any():")
        self.indent += 1
        self.block(s.body, Ctx(mt, True, ctx.loop))
        self.emit("pass")
        self.indent -= 1
        if s.orelse:
            mf = self.tmp("_m")
            self.emit(f"{mf} = {ctx.mask} & ~{c}")
            self.emit(f"if {mf}.any():")
            self.indent += 1
            self.block(s.orelse, Ctx(mf, True, ctx.loop))
            self.emit("pass")
            self.indent -= 1

    def loop_info(self, node: ast.AST) -> dict:
        k = self.tmp("")
        return {"brk": f"_brk{k}", "cnt": f"_cnt{k}"}

    def for_stmt(self, s: ast.For, ctx: Ctx) -> None:
        args = [self.expr(a, ctx) for a in s.iter.args]
        if len(args) == 1:
            start, stop, step = self.const(0), args[0], self.const(1)
        elif len(args) == 2:
            start, stop, step = args[0], args[1], self.const(1)
        else:
            start, stop, step = args
        name = s.target.id
        ret, _, _ = self.exits_in(s)
        if id(s) not in self.ir.divergent:
            u = self.tmp("_u")
            self.emit(f"for {u} in rt.irange({start}, {stop}, {step}):")
            self.indent += 1
            self.emit(f"rt.tick({s.lineno}, {ctx.mask})")
            inner = Ctx(ctx.mask, ctx.partial, None)
            if ret:
                mi = self.tmp("_m")
                self.emit(f"{mi} = {ctx.mask} & ~_done")
                self.emit(f"if not {mi}.any(): break")
                inner.mask = mi
            self.store_name(name, u, inner)
            self.block(s.body, inner)
            self.indent -= 1
            return
        info = self.loop_info(s)
        iv, lm, stp, stop_v = self.tmp("_iv"), self.tmp("_lm"), self.tmp("_st"), self.tmp("_stop")
        self.emit(f"{iv} = rt.lanes({start})")
        self.emit(f"{stp} = {step}")
        self.emit(f"{stop_v} = {stop}")
        self.emit(f"rt.check_step({stp}, {ctx.mask}, {s.lineno})")
        self.emit(f"{lm} = {ctx.mask}")
        self.emit(f"{info['brk']} = rt.no_lanes")
        self.emit("while True:")
        self.indent += 1
        self.emit(f"rt.tick({s.lineno}, {lm})")
        self.emit(f"{lm} = {lm} & rt.range_cond({iv}, {stop_v}, {stp}) & ~{info['brk']}"
                  + (" & ~_done" if ret else ""))
        self.emit(f"if not {lm}.any(): break")
        self.emit(f"{self.var(name)} = rt.merge({lm}, {iv}, {self.var(name)})")
        self.emit(f"{info['cnt']} = rt.no_lanes")
        self.block(s.body, Ctx(lm, True, info))
        self.emit(f"{iv} = {iv} + {stp}")
        self.indent -= 1

    def while_stmt(self, s: ast.While, ctx: Ctx) -> None:
        ret, _, _ = self.exits_in(s)
        if id(s) not in self.ir.divergent:
            self.emit("while True:")
            self.indent += 1
            self.emit(f"rt.tick({s.lineno}, {ctx.mask})")
            inner = Ctx(ctx.mask, ctx.partial, None)
            if ret:
                mi = self.tmp("_m")
                self.emit(f"{mi} = {ctx.mask} & ~_done")
                self.emit(f"if not {mi}.any(): break")
                inner.mask = mi
            cond = self.expr(s.test, inner)
            self.emit(f"if not ({cond}): break")
            self.block(s.body, inner)
            self.indent -= 1
            return
        info = self.loop_info(s)
        lm = self.tmp("_lm")
        self.emit(f"{lm} = {ctx.mask}")
        self.emit(f"{info['brk']} = rt.no_lanes")
        self.emit("while True:")
        self.indent += 1
        self.emit(f"rt.tick({s.lineno}, {lm})")
        self.emit(f"{lm} = {lm} & ~{info['brk']}" + (" & ~_done" if ret else ""))
        cond = self.expr(s.test, Ctx(lm, True, info))
        self.emit(f"{lm} = {lm} & rt.truth({cond})")
        self.emit(f"if not {lm}.any(): break")
        self.emit(f"{info['cnt']} = rt.no_lanes")
        self.block(s.body, Ctx(lm, True, info))
        self.indent -= 1


class ModuleGen:
    """Generates one Python module holding a kernel and every device function it calls."""

    def __init__(self, fe, instrument: bool):
        self.fe = fe
        self.instrument = instrument
        self.namespace: dict[str, Any] = {"np": np}
        self.consts: dict[tuple, str] = {}
        self.functions: dict[int, str] = {}
        self.pending: list[tuple[FunctionIR, str]] = []
        self.decls: dict[tuple, int] = {}
        self.lines: list[tuple[str, int, str]] = []  # (code, src line, src file)

    def const(self, value: Any) -> str:
        if value is None or isinstance(value, bool):
            return repr(value)
        if isinstance(value, np.dtype):
            key = ("dtype", value.str)
            conv = value
        elif isinstance(value, tuple):
            key = ("tuple", value)
            conv = tuple(self._typed(v) for v in value)
        else:
            conv = self._typed(value)
            key = (type(conv).__name__, repr(value))
        if key not in self.consts:
            name = f"_K{len(self.consts)}"
            self.consts[key] = name
            self.namespace[name] = conv
        return self.consts[key]

    @staticmethod
    def _typed(v: Any) -> Any:
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        if isinstance(v, (np.integer, np.floating)):
            return v
        if isinstance(v, int):
            return np.int64(v) if -(2**63) <= v < 2**63 else np.uint64(v)
        if isinstance(v, float):
            return np.float64(v)
        return v

    def const_array(self, array: np.ndarray, name: str) -> str:
        key = ("carray", id(array))
        if key not in self.consts:
            n = f"_CA{len(self.consts)}"
            self.consts[key] = n
            self.namespace[n] = ("const", array, name)
        return f"rt.const_array({self.consts[key]})"

    def decl_id(self, ir: FunctionIR, node: ast.AST) -> int:
        key = (ir.source.filename, node.lineno, node.col_offset)
        return self.decls.setdefault(key, len(self.decls))

    def function(self, ir: FunctionIR) -> str:
        key = id(ir)
        if key not in self.functions:
            name = f"_dev_{ir.name}_{len(self.functions)}"
            self.functions[key] = name
            self.pending.append((ir, name))
        return self.functions[key]

    def build(self, kernel: FunctionIR) -> Compiled:
        entry = f"_kernel_{kernel.name}"
        self.pending.append((kernel, entry))
        self.functions[id(kernel)] = entry
        while self.pending:
            ir, name = self.pending.pop(0)
            gen = FunctionGen(self, ir, name, self.instrument)
            gen.generate()
            for code, src_line in gen.out:
                self.lines.append((code, src_line, ir.source.filename))
            self.lines.append(("", 0, ""))
        text = "\n".join(code for code, _, _ in self.lines) + "\n"
        line_map = {i + 1: src for i, (_, src, _) in enumerate(self.lines)}
        file_map = {i + 1: f for i, (_, _, f) in enumerate(self.lines)}
        fake = f"<gpusim {kernel.name}>"
        import linecache

        linecache.cache[fake] = (len(text), None, text.splitlines(True), fake)
        code = compile(text, fake, "exec")
        exec(code, self.namespace)
        comp = Compiled(kernel.name, text, self.namespace[entry], line_map, kernel.source.filename)
        comp.file_map = file_map  # type: ignore[attr-defined]
        return comp
