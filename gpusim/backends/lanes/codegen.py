"""Lanes back end: the typed kernel IR -> Python source over NumPy lane vectors.

The execution model (read this first)
-------------------------------------
* A **lane** is one CUDA thread. A chunk of whole blocks runs at once: lane ``k`` of a chunk is thread
  ``k % T`` of the chunk's block ``k // T`` (``T`` threads per block, numbered x-fastest), so the 32 lanes of a
  warp sit side by side.
* A value the IR marks GRID (``gpusim.ir.uniformity``: literals, launch dimensions, scalar arguments, loop
  counters of GRID loops, global reads at a GRID index) is a plain NumPy scalar, so its control flow stays
  plain Python and costs nothing per lane. Any other value (thread and block indices and what is computed
  from them, shared and local reads) is a NumPy vector with one entry per lane of the chunk — the chunk holds
  several blocks, so even a BLOCK value varies within it.
* A **mask** is a boolean lane vector: the lanes executing the current statement. An ``if`` whose condition
  is not GRID runs its body under ``mask & cond`` and its ``else`` under ``mask & ~cond``; such a loop runs
  until no lane is left in its mask; ``break``/``continue``/``return`` taken by some lanes remove them from
  the mask (for the rest of the iteration, the loop, or the function). Assignments under a partial mask
  merge (``np.where(mask, new, old)``); memory accesses touch only active lanes, so an index that would be out
  of bounds on a masked-off lane is harmless.
* A **barrier** (``syncthreads``) is legal only where every live (not yet returned) thread of the block is
  active; otherwise it is a ``BarrierDivergence`` fault. Lanes execute a statement together, so a barrier
  orders nothing by itself: the race tracker (``gpusim.observe.races``) records barrier epochs and flags any
  two unordered accesses to one element by different threads, at least one a write, not both atomic —
  lockstep execution never hides a race.
* Functions and loop iterations charge their work to a step budget (``work.py``); past it a ``KernelTimeout``
  fault ends the launch.
* A device function is a Python function of the chunk's lanes: a call runs it for the caller's active lanes,
  under their mask, with its own locals. A recursive one (``recursive_functions``) returns at once when no lane
  is active (so a recursion that ends per lane ends), and past ``MAX_RECURSION_DEPTH`` nested calls a
  ``KernelError`` names it and the thread (``Runtime.recurse``).

Types are the IR's (numba-cuda's): the generated code applies NumPy operations to operands already of the
right type. What the subset excludes is rejected by the front end (``gpusim.frontend``) before this runs.
Dynamic shared arrays of different element sizes alias in memory, but their race and initialisation records
are kept per element size.
"""

from __future__ import annotations

import linecache
import threading
import types
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...ir import nodes as N
from ...ir.nodes import Uni
from ...ir.types import Array, CharSeq, RecordRef, Scalar, Tuple, Type
from ...ir.unroll import plan_loops
from ...ir.walk import walk_stmts
from ...runtime import intrinsics, libdevice
from .barriers import skipped_only_by_exiting
from .expressions import Ctx, ExpressionGen
from .recursion import recursive_functions
from .work import OVERHEAD, iteration, straight_line


@dataclass
class Compiled:
    """Generated Python for one kernel (and the device functions it calls)."""

    name: str
    source: str               # the generated module text
    func: Any                 # the kernel entry: func(rt, *args)
    line_map: dict[int, int]  # generated line -> kernel source line
    filename: str             # the kernel's file
    module: N.Module | None = field(default=None, repr=False)   # the IR it was generated from
    entry_work: tuple[int, int] = (0, 0)  # steps the kernel's straight-line code charges per chunk: (fixed, per lane)
    memory: Any = field(default=None, repr=False)  # gpusim.limits.Memory of the IR, filled in by the first launch
    grid_synchronised: bool | None = None  # does the IR sync its grid (frontend.groups), found by the first launch


class FunctionGen(ExpressionGen):
    def __init__(self, module: ModuleGen, fn: N.Function, pyname: str, instrument: bool, recursive: bool = False):
        self.mod = module
        self.fn = fn
        #: the function calls itself (directly or through others): it returns at once for an empty mask, and
        #: counts its depth (``Runtime.recurse``)
        self.recursive = recursive
        self.pyname = pyname
        self.instrument = instrument
        self.out: list[tuple[str, int]] = []
        self.indent = 1
        self.n = 0
        self.cur_line = fn.line
        self.hoisted: dict[tuple[str, str], str] = {}
        self.registers = self.register_copies(fn)
        self.prologue: list[tuple[str, int]] = []
        self.masked_return = any(isinstance(s, N.Return) and s.uni > Uni.GRID for s in walk_stmts(fn.body))
        self.param_names = {p.name for p in fn.params}
        self.unrolled = plan_loops(fn) if instrument else {}   # loops whose requests the observers regroup
        self.exit_skipped = skipped_only_by_exiting(fn)       # barriers skipped only by threads leaving

    # -- helpers --------------------------------------------------------------------------------------
    def tmp(self, prefix: str = "_t") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, code: str) -> None:
        self.out.append(("    " * self.indent + code, self.cur_line))

    @staticmethod
    def reindent(stmts: list[tuple[str, int]]) -> list[tuple[str, int]]:
        return [("    " + code, line) for code, line in stmts]

    @staticmethod
    def var(name: str) -> str:
        return "v_" + name.replace("$", "S_")

    def const(self, value: Any, t: Type) -> str:
        return self.mod.const(value, t)

    def level(self, name: str) -> Uni:
        return self.fn.var_uni.get(name, Uni.GRID)

    @staticmethod
    def register_copies(fn: N.Function) -> dict[str, N.Special]:
        """Locals assigned once, at the top of the function, from a special register (``tx = threadIdx.x``):
        reading one is reading the register."""
        counts: dict[str, int] = {p.name: 1 for p in fn.params}
        for s in walk_stmts(fn.body):
            if isinstance(s, N.Assign):
                counts[s.target] = counts.get(s.target, 0) + 1
            elif isinstance(s, N.ForRange):
                counts[s.var] = counts.get(s.var, 0) + 2
        return {s.target: s.value for s in fn.body
                if isinstance(s, N.Assign) and isinstance(s.value, N.Special) and counts[s.target] == 1}

    # -- function -------------------------------------------------------------------------------------
    def generate(self) -> None:
        fn = self.fn
        params = [self.var(p.name) for p in fn.params]
        if fn.is_kernel:
            self.out.append((f"def {self.pyname}(rt{''.join(', ' + p for p in params)}):", fn.line))
        else:
            self.out.append((f"def {self.pyname}(rt, _m0{''.join(', ' + p for p in params)}):", fn.line))
        self.emit("_tx, _ty, _tz, _bx, _by, _bz = rt.tx, rt.ty, rt.tz, rt.bx, rt.by, rt.bz")
        self.emit("_bdx, _bdy, _bdz, _gdx, _gdy, _gdz = rt.bdx, rt.bdy, rt.bdz, rt.gdx, rt.gdy, rt.gdz")
        self.emit("_lane, _ws = rt.laneid, rt.warpsize")
        if fn.is_kernel:
            self.emit("_m0 = rt.all_lanes")
        self.emit("_done = rt.no_lanes")
        if not fn.is_kernel:
            self.emit("_rv = None")
        names = {p.name for p in fn.params}
        converted = {st.target for st in walk_stmts(fn.body) if _join_cast(st)}
        for name in sorted(fn.var_uni):
            if name not in names and (fn.var_uni[name] > Uni.GRID or name in converted) and not name.startswith("$"):
                self.emit(f"{self.var(name)} = None")
        entry = self.entry_work = straight_line(fn.body)
        if self.recursive:
            # no lane left to run it: return a placeholder at once (the caller merges nothing of it), else
            # a recursion whose end depends on lanes' values would never end once they have all returned
            self.emit(f"if not _m0.any(): return {self.placeholder(fn.return_type)}")
        self.emit(f"rt.tick({fn.line}, _m0, {entry.fixed * OVERHEAD}, {entry.lanes})")
        start = len(self.out)
        if self.recursive:
            self.emit(f"rt.recurse({fn.line}, _m0, {fn.py_name!r})")
            self.emit("try:")
            self.indent += 1
        self.block(fn.body, Ctx("_m0", False, None))
        self.out[start:start] = self.prologue
        if not fn.is_kernel:
            self.emit("return _rv")
        if self.recursive:
            self.indent -= 1
            self.emit("finally:")
            self.emit("    rt.depth -= 1")

    def placeholder(self, t: Type) -> str:
        """A value of type ``t`` that no lane reads (a recursive call under an empty mask returns it)."""
        if isinstance(t, (Scalar, CharSeq)):
            return self.const(0 if isinstance(t, Scalar) else "", t)
        if isinstance(t, Tuple) and not isinstance(t, RecordRef):
            return "(" + "".join(self.placeholder(x) + ", " for x in t.items) + ")"
        return "None"

    # -- statements -----------------------------------------------------------------------------------
    def block(self, body: list[N.Stmt], ctx: Ctx) -> None:
        for s in body:
            self.cur_line = s.line
            if self.stmt(s, ctx):
                return

    def exits_in(self, node: N.Stmt) -> tuple[bool, bool, bool]:
        return exits_in(node)

    def refresh_mask(self, node: N.Stmt, ctx: Ctx) -> None:
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

    def stmt(self, s: N.Stmt, ctx: Ctx) -> bool:
        """Generate one statement; True when the rest of the block is dead (all its lanes left)."""
        m = ctx.mask
        if isinstance(s, N.Assign):
            if self.is_join_cast(s):
                # ``x = T(x)`` where control flow joins: on a path that never assigned x there is nothing to
                # convert (the value is None here), and a later read reports the unassigned variable
                self.emit(f"if {self.var(s.target)} is not None:")
                self.indent += 1
                self.store_name(s.target, self.expr(s.value, ctx), ctx)
                self.indent -= 1
                return False
            value = self.expr(s.value, ctx)
            self.store_name(s.target, value, ctx, isinstance(s.value.type, Array))
        elif isinstance(s, N.Store):
            arr = self.expr(s.array, ctx)
            idx = "(" + "".join(self.expr(i, ctx) + ", " for i in s.index) + ")"
            value = self.expr(s.value, ctx)
            self.emit(f"rt.st({arr}, {m}, {idx}, {value}, {s.line})")
        elif isinstance(s, N.ExprStmt):
            code = self.expr(s.value, ctx)
            if not code.isidentifier():
                self.emit(code)
        elif isinstance(s, N.SharedDecl):
            align = f", {s.alignment}" if s.alignment is not None else ""
            self.emit(f"{self.var(s.target)} = rt.shared_array({s.decl}, {s.name!r}, {s.shape!r}, "
                      f"{self.dtype(s.dtype)}, {m}, {s.line}{align})")
        elif isinstance(s, N.LocalDecl):
            self.emit(f"{self.var(s.target)} = rt.local_array({s.decl}, {s.name!r}, {s.shape!r}, "
                      f"{self.dtype(s.dtype)}, {m}, {s.line})")
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
            if s.uni > Uni.GRID:
                b = ctx.loop["brk"]
                self.emit(f"{b} = {b} | {m}")
            else:
                self.emit("break")
            return True
        elif isinstance(s, N.Continue):
            if s.uni > Uni.GRID:
                c = ctx.loop["cnt"]
                self.emit(f"{c} = {c} | {m}")
            else:
                self.emit("continue")
            return True
        elif isinstance(s, N.Return):
            self.return_stmt(s, ctx)
            return True
        elif isinstance(s, N.Barrier):
            leaving = ", True" if id(s) in self.exit_skipped else ""
            self.emit(f"rt.{'grid_sync' if s.grid else 'syncthreads'}({m}, {s.line}{leaving})")
        elif isinstance(s, N.SyncWarp):
            self.emit(f"rt.syncwarp({m}, {self.expr(s.mask, ctx)}, {s.line})")
        elif isinstance(s, N.Fence):
            pass
        elif isinstance(s, N.Print):
            items = ", ".join(repr(i) if isinstance(i, str) else self.expr(i, ctx) for i in s.items)
            types = tuple(None if isinstance(i, str) else i.type for i in s.items)
            self.emit(f"rt.print_({m}, {s.line}, ({items}{',' if len(s.items) == 1 else ''}), "
                      f"{self.mod.constant_object(types)})")
        else:  # pragma: no cover - every statement of the IR is handled above
            raise TypeError(f"the lanes back end has no code for {type(s).__name__}")
        return False

    def return_stmt(self, s: N.Return, ctx: Ctx) -> None:
        masked = s.uni > Uni.GRID
        if self.fn.is_kernel:
            if masked:
                self.emit(f"_done = _done | {ctx.mask}")
                self.emit("rt.exited = _done")
            else:
                self.emit("return")
            return
        val = self.expr(s.value, ctx) if s.value is not None else "None"
        if self.masked_return:
            if val != "None":
                self.emit(f"_rv = rt.merge({ctx.mask}, {val}, _rv)")
            if masked:
                self.emit(f"_done = _done | {ctx.mask}")
            else:
                self.emit("return _rv")
        else:
            self.emit(f"return {val}")

    def is_join_cast(self, s: N.Assign) -> bool:
        """``x = T(x)`` of a local that may be unassigned here (not a parameter, not a temporary)."""
        v = s.value
        return (isinstance(v, N.Cast) and isinstance(v.value, N.Var) and v.value.name == s.target
                and not s.target.startswith("$") and s.target not in self.param_names)

    def store_name(self, name: str, value: str, ctx: Ctx, is_array: bool = False) -> None:
        v = self.var(name)
        # a temporary ($-name) is read only under the mask it was written under: nothing to merge
        if not is_array and self.level(name) > Uni.GRID and ctx.partial and not name.startswith("$"):
            self.emit(f"{v} = rt.merge({ctx.mask}, {value}, {v})")
        else:
            self.emit(f"{v} = {value}")

    def if_stmt(self, s: N.If, ctx: Ctx) -> None:
        cond = self.expr(s.cond, ctx)
        if s.uni == Uni.GRID:
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
        self.emit(f"{c} = {cond}")
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

    def loop_info(self) -> dict:
        k = self.tmp("")
        return {"brk": f"_brk{k}", "cnt": f"_cnt{k}"}

    def tick(self, s: N.ForRange | N.While, mask: str) -> None:
        work = iteration(s)
        self.emit(f"rt.tick({s.line}, {mask}, {work.fixed * OVERHEAD}, {work.lanes})")

    def for_stmt(self, s: N.ForRange, ctx: Ctx) -> None:
        start, stop, step = (self.expr(x, ctx) for x in (s.start, s.stop, s.step))
        ret, _, _ = self.exits_in(s)
        vt = self.dtype(s.start.type)
        if s.uni == Uni.GRID:
            u = self.tmp("_u")
            self.emit(f"for {u} in rt.irange({start}, {stop}, {step}, {vt}, {ctx.mask}, {s.line}):")
            self.indent += 1
            self.tick(s, ctx.mask)
            inner = Ctx(ctx.mask, ctx.partial, None)
            if ret:
                mi = self.tmp("_m")
                self.emit(f"{mi} = {ctx.mask} & ~_done")
                self.emit(f"if not {mi}.any(): break")
                inner.mask = mi
            self.store_name(s.var, u, inner)
            self.block(s.body, inner)
            self.indent -= 1
            return
        info = self.loop_info()
        iv, lm, stp, stop_v = self.tmp("_iv"), self.tmp("_lm"), self.tmp("_st"), self.tmp("_stop")
        self.emit(f"{iv} = {start}")
        self.emit(f"{stp} = {step}")
        self.emit(f"{stop_v} = {stop}")
        self.emit(f"rt.check_step({stp}, {ctx.mask}, {s.line})")
        self.emit(f"{lm} = {ctx.mask}")
        plan = self.unrolled.get(id(s))
        if plan is not None:
            self.emit(f"rt.loop_enter({iv}, {stop_v}, {stp}, {lm}, {plan.count}, {plan.epilog}, {s.line})")
        self.emit(f"{info['brk']} = rt.no_lanes")
        self.emit("while True:")
        self.indent += 1
        self.tick(s, lm)
        self.emit(f"{lm} = {lm} & rt.range_cond({iv}, {stop_v}, {stp}) & ~{info['brk']}"
                  + (" & ~_done" if ret else ""))
        self.emit(f"if not {lm}.any(): break")
        if plan is not None:
            self.emit("rt.loop_iter()")
        self.emit(f"{self.var(s.var)} = rt.merge({lm}, {iv}, {self.var(s.var)})")
        self.emit(f"{info['cnt']} = rt.no_lanes")
        self.block(s.body, Ctx(lm, True, info))
        self.emit(f"{iv} = {iv} + {stp}")
        self.indent -= 1
        if plan is not None:
            self.emit("rt.loop_exit()")

    def while_stmt(self, s: N.While, ctx: Ctx) -> None:
        ret, _, _ = self.exits_in(s)
        if s.uni == Uni.GRID:
            self.emit("while True:")
            self.indent += 1
            self.tick(s, ctx.mask)
            inner = Ctx(ctx.mask, ctx.partial, None)
            if ret:
                mi = self.tmp("_m")
                self.emit(f"{mi} = {ctx.mask} & ~_done")
                self.emit(f"if not {mi}.any(): break")
                inner.mask = mi
            cond = self.expr(s.cond, inner)
            self.emit(f"if not ({cond}): break")
            self.block(s.body, inner)
            self.indent -= 1
            return
        info = self.loop_info()
        lm = self.tmp("_lm")
        self.emit(f"{lm} = {ctx.mask}")
        self.emit(f"{info['brk']} = rt.no_lanes")
        self.emit("while True:")
        self.indent += 1
        self.tick(s, lm)
        self.emit(f"{lm} = {lm} & ~{info['brk']}" + (" & ~_done" if ret else ""))
        cond = self.expr(s.cond, Ctx(lm, True, info))
        self.emit(f"{lm} = {lm} & {cond}")
        self.emit(f"if not {lm}.any(): break")
        self.emit(f"{info['cnt']} = rt.no_lanes")
        self.block(s.body, Ctx(lm, True, info))
        self.indent -= 1


def _join_cast(s: N.Stmt) -> bool:
    """``x = T(x)``: a conversion the front end puts where paths with different types of ``x`` meet."""
    return (isinstance(s, N.Assign) and isinstance(s.value, N.Cast) and isinstance(s.value.value, N.Var)
            and s.value.value.name == s.target)


class ModuleGen:
    """Generates one Python module holding a kernel and every device function it calls."""

    def __init__(self, instrument: bool):
        self.instrument = instrument
        self.namespace: dict[str, Any] = {"np": np, "ix": intrinsics, "ld": libdevice.NAMESPACE}
        self.consts: dict[tuple, str] = {}
        self.functions: dict[str, str] = {}
        self.lines: list[tuple[str, int]] = []  # (code, src line)

    def _name(self, key: tuple, prefix: str, value: Any) -> str:
        name = self.consts.get(key)
        if name is None:
            name = f"{prefix}{len(self.consts)}"
            self.consts[key] = name
            self.namespace[name] = value
        return name

    def const(self, value: Any, t: Type) -> str:
        if isinstance(t, Scalar):
            return self._name(("const", t.name, repr(value)), "_K", t.dtype.type(value))
        if isinstance(t, CharSeq):
            return self._name(("const", str(t), repr(value)), "_K", t.value(value))
        raise TypeError(f"no constant of type {t}")  # pragma: no cover

    def dtype(self, dt: np.dtype) -> str:
        key = dt.str if dt.fields is None else repr(dt.descr)  # a structured dtype's str is only its size
        return self._name(("dtype", key), "_D", np.dtype(dt))

    def scalar_type(self, dt: np.dtype) -> str:
        return self._name(("type", dt.str), "_T", np.dtype(dt).type)

    def constant_object(self, value: Any) -> str:
        return self._name(("object", repr(value)), "_O", value)

    def const_array(self, e: N.ConstArray) -> str:
        name = self._name(("carray", id(e.data)), "_CA", ("const", e.data, e.name))
        return f"rt.const_array({name})"

    def function(self, name: str) -> str:
        return self.functions[name]

    def build(self, module: N.Module) -> Compiled:
        order = [module.kernel] + [n for n in module.functions if n != module.kernel]
        for k, name in enumerate(order):
            self.functions[name] = f"_kernel_{module.entry.py_name}" if k == 0 else f"_dev_{k}_" + "".join(
                c if c.isalnum() else "_" for c in module.functions[name].py_name)
        recursive = recursive_functions(module)
        for name in order:
            gen = FunctionGen(self, module.functions[name], self.functions[name], self.instrument,
                              name in recursive)
            gen.generate()
            if name == module.kernel:
                entry = gen.entry_work
            self.lines.extend(gen.out)
            self.lines.append(("", 0))
        text = "\n".join(code for code, _ in self.lines) + "\n"
        line_map = {i + 1: src for i, (_, src) in enumerate(self.lines)}
        kernel = module.entry
        fake = f"<gpusim {kernel.py_name}>"
        linecache.cache[fake] = (len(text), None, text.splitlines(True), fake)
        code = _code_of(text, fake)
        exec(code, self.namespace)
        return Compiled(kernel.py_name, text, self.namespace[self.functions[module.kernel]], line_map,
                        module.filename, module, (entry.fixed * OVERHEAD, entry.lanes))


#: generated text -> its code object: a suite compiles one kernel for many argument types, and nearly half of
#: those modules come out the same text (types decide the constants bound in the namespace, not the code)
_CODE: OrderedDict[tuple[str, str], types.CodeType] = OrderedDict()
MAX_CODES = 1024


_code_lock = threading.Lock()


def _code_of(text: str, filename: str) -> types.CodeType:
    """``compile`` of generated text, once per text."""
    key = (filename, text)
    with _code_lock:
        code = _CODE.get(key)
        if code is not None:
            _CODE.move_to_end(key)
            return code
    code = compile(text, filename, "exec")
    with _code_lock:
        _CODE[key] = code
        while len(_CODE) > MAX_CODES:
            _CODE.popitem(last=False)
    return code


def generate(module: N.Module, instrument: bool) -> Compiled:
    """The lanes back end's entry: Python for ``module``, compiled and ready to run."""
    return ModuleGen(instrument).build(module)


def exits_in(node: N.Stmt) -> tuple[bool, bool, bool]:
    """(masked return, masked break, masked continue) inside ``node`` that escape it."""
    ret = brk = cont = False

    def walk(stmts: list[N.Stmt], in_loop: bool) -> None:
        nonlocal ret, brk, cont
        for s in stmts:
            if isinstance(s, N.Return) and s.uni > Uni.GRID:
                ret = True
            elif isinstance(s, N.Break) and s.uni > Uni.GRID and not in_loop:
                brk = True
            elif isinstance(s, N.Continue) and s.uni > Uni.GRID and not in_loop:
                cont = True
            elif isinstance(s, N.If):
                walk(s.body, in_loop)
                walk(s.orelse, in_loop)
            elif isinstance(s, (N.ForRange, N.While)):
                walk(s.body, True)

    if isinstance(node, (N.ForRange, N.While)):
        walk(node.body, True)
    elif isinstance(node, N.If):
        walk(node.body, False)
        walk(node.orelse, False)
    return ret, brk, cont
