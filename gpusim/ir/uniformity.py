"""The uniformity pass: how widely each value is shared (``Uni``: grid, block, warp, lane), to a fixed point.

Rules:

* constants, scalar arguments, launch dimensions and array handles are GRID; ``blockIdx`` is BLOCK;
  ``threadIdx``, ``laneid`` are LANE; an operation is as wide as its widest operand;
* a load from global or const memory is as wide as its index; from shared memory at least BLOCK (each block
  has its own); from local memory LANE; atomics are LANE; votes, ``activemask`` and a shuffle from one source
  lane are WARP; ``syncthreads_count`` is BLOCK;
* a local is the join of everything assigned to it, and of the *control level* where each assignment
  happens: the join of the enclosing ``if`` conditions and loop levels (a value assigned under a condition
  that differs between lanes differs between lanes);
* a loop's level is the join of its bounds (or condition) and of the ``break``/``continue`` statements that
  leave it under a condition: ``uni`` of a ``break`` is the loop's level joined with the conditions between
  it and its loop; a ``return``'s is its control level;
* a device function is analysed once per tuple of argument levels (a *specialisation*, named
  ``name@levels`` when there are several), and its result is as wide as its ``return`` values and
  control levels. A recursive call (of a specialisation being analysed) assumes the result GRID at first; if
  the analysis finds it wider, the specialisation, and every one analysed while it was, is analysed again
  with the wider assumption (at most four rounds: there are four levels).

The pass is pure: it returns an analysed copy. An array variable assigned where lanes diverge is rejected
here (gpusim holds one array per variable for every thread), with its file and line.
"""

from __future__ import annotations

import copy
import linecache

from ..faults import UnsupportedConstruct
from . import nodes as N
from .nodes import Uni, join
from .types import Array
from .walk import children, copy_tree

_SPECIAL_UNI = {"laneid": Uni.LANE, "lanemask_lt": Uni.LANE, "warpsize": Uni.GRID}
for _axis in "xyz":
    _SPECIAL_UNI[f"threadIdx.{_axis}"] = Uni.LANE
    _SPECIAL_UNI[f"blockIdx.{_axis}"] = Uni.BLOCK
    _SPECIAL_UNI[f"blockDim.{_axis}"] = Uni.GRID
    _SPECIAL_UNI[f"gridDim.{_axis}"] = Uni.GRID

MAX_ROUNDS = 1000


class _NeedSummary(Exception):
    def __init__(self, key: tuple):
        self.key = key


class _FunctionAnalysis:
    def __init__(self, pass_: _Pass, fn: N.Function, levels: tuple[Uni, ...]):
        self.p = pass_
        self.fn = fn
        self.var_uni: dict[str, Uni] = {}
        for param, lvl in zip(fn.params, levels):
            param.uni = lvl
            self.var_uni[param.name] = lvl
        self.jumps: dict[int, Uni] = {}
        self.callees: dict[int, str] = {}  # id(Call) -> the callee's name before specialisation
        self.changed = False
        self.return_uni = Uni.GRID

    def run(self) -> None:
        for _ in range(MAX_ROUNDS):
            self.changed = False
            self.block(self.fn.body, Uni.GRID, [])
            if not self.changed:
                break
        self.fn.var_uni = dict(self.var_uni)
        self.fn.return_uni = self.return_uni

    def raise_to(self, name: str, level: Uni) -> None:
        if level > self.var_uni.get(name, -1):
            self.var_uni[name] = level
            self.changed = True

    def error(self, line: int, message: str) -> UnsupportedConstruct:
        return UnsupportedConstruct(message, filename=self.fn.filename, lineno=line,
                                    source_line=linecache.getline(self.fn.filename, line).rstrip("\n"))

    # loops: a stack of (loop node, level of the conditions between the loop and here)
    def block(self, stmts: list[N.Stmt], ctrl: Uni, loops: list) -> None:
        for s in stmts:
            self.stmt(s, ctrl, loops)

    def stmt(self, s: N.Stmt, ctrl: Uni, loops: list) -> None:
        if isinstance(s, N.Assign):
            lvl = self.expr(s.value)
            if isinstance(s.value.type, Array) and ctrl > Uni.GRID:
                raise self.error(s.line, f"the array variable {s.target!r} is assigned inside divergent code: "
                                         "gpusim cannot hold a different array per thread (numba-cuda can); "
                                         "index one array, or branch around the accesses instead")
            self.raise_to(s.target, join(lvl, ctrl))
        elif isinstance(s, (N.SharedDecl, N.LocalDecl)):
            self.raise_to(s.target, Uni.GRID)
        elif isinstance(s, N.If):
            c = self.expr(s.cond)
            s.uni = c
            inner = [(loop, join(rel, c)) for loop, rel in loops]
            self.block(s.body, join(ctrl, c), inner)
            self.block(s.orelse, join(ctrl, c), inner)
        elif isinstance(s, N.ForRange):
            bounds = join(self.expr(s.start), self.expr(s.stop), self.expr(s.step))
            s.uni = join(bounds, self.jumps.get(id(s), Uni.GRID))
            inner = join(ctrl, s.uni)
            self.raise_to(s.var, inner)
            self.block(s.body, inner, loops + [(s, Uni.GRID)])
        elif isinstance(s, N.While):
            c = self.expr(s.cond)
            s.uni = join(c, self.jumps.get(id(s), Uni.GRID))
            self.block(s.body, join(ctrl, s.uni), loops + [(s, Uni.GRID)])
        elif isinstance(s, (N.Break, N.Continue)):
            loop, rel = loops[-1]
            if rel > self.jumps.get(id(loop), Uni.GRID):
                self.jumps[id(loop)] = rel
                self.changed = True
            s.uni = join(loop.uni, rel)
        elif isinstance(s, N.Return):
            lvl = ctrl
            if s.value is not None:
                lvl = join(lvl, self.expr(s.value))
            s.uni = ctrl
            if lvl > self.return_uni:
                self.return_uni = lvl
                self.changed = True
        else:  # Store, ExprStmt, Barrier, SyncWarp, Fence, Print
            for e in children(s):
                self.expr(e)

    def expr(self, e: N.Expr) -> Uni:
        lvl = self._expr(e)
        e.uni = lvl
        return lvl

    def _expr(self, e: N.Expr) -> Uni:
        if isinstance(e, (N.Const, N.ConstArray)):
            return Uni.GRID
        if isinstance(e, N.Var):
            return self.var_uni.get(e.name, Uni.GRID)
        if isinstance(e, N.Special):
            return _SPECIAL_UNI[e.name]
        if isinstance(e, N.Let):
            self.raise_to(e.name, self.expr(e.value))
            return self.expr(e.body)
        if isinstance(e, N.Load):
            lvl = join(self.expr(e.array), *(self.expr(i) for i in e.index))
            space = e.array.type.space
            if space == "shared":
                return join(lvl, Uni.BLOCK)
            if space == "local":
                return Uni.LANE
            return lvl
        if isinstance(e, N.Call):
            levels = tuple(self.expr(a) for a in e.args)
            callee = self.p.summary(self.callees.setdefault(id(e), e.function), levels)
            e.function = callee.name
            return callee.return_uni
        if isinstance(e, N.Atomic):
            for c in children(e):
                self.expr(c)
            return Uni.LANE
        if isinstance(e, N.Shuffle):
            self.expr(e.mask)
            value, lane = self.expr(e.value), self.expr(e.lane)
            if value <= Uni.WARP:
                return value
            return Uni.WARP if e.kind == "idx" and lane <= Uni.WARP else Uni.LANE
        if isinstance(e, (N.Vote, N.ActiveMask)):
            for c in children(e):
                self.expr(c)
            return Uni.WARP
        if isinstance(e, N.Match):
            self.expr(e.mask)
            self.expr(e.value)
            return Uni.WARP if e.kind == "all" else Uni.LANE
        if isinstance(e, N.BarrierReduce):
            self.expr(e.predicate)
            return Uni.BLOCK
        return join(*(self.expr(c) for c in children(e)))


class _Recursive:
    """What a recursive call sees of a specialisation still being analysed: its name, its assumed result."""

    def __init__(self, name: str, return_uni: Uni):
        self.name = name
        self.return_uni = return_uni


class _Pass:
    def __init__(self, module: N.Module):
        self.module = module
        self.done: dict[tuple, N.Function] = {}
        self.names: dict[str, int] = {}
        self.key_names: dict[tuple, str] = {}
        self.stack: list[tuple] = []
        self.assumed: dict[tuple, Uni] = {}

    def summary(self, name: str, levels: tuple[Uni, ...]) -> N.Function | _Recursive:
        key = (name, levels)
        fn = self.done.get(key)
        if fn is None:
            if key in self.stack:  # recursion
                return _Recursive(self.name_of(key), self.assumed.setdefault(key, Uni.GRID))
            raise _NeedSummary(key)
        return fn

    def name_of(self, key: tuple) -> str:
        name = self.key_names.get(key)
        if name is None:
            base, levels = key
            n = self.names.get(base, 0)
            name = self.key_names[key] = base if n == 0 else f"{base}@{''.join(lvl.name[0] for lvl in levels)}"
            self.names[base] = n + 1
        return name

    def analyse(self, key: tuple) -> N.Function:
        name, _ = key
        fn = copy_tree(self.module.functions[name])
        a = _FunctionAnalysis(self, fn, key[1])
        a.run()
        fn.name = self.name_of(key)  # named when done, or when a recursive call first named it
        return fn

    def run(self) -> N.Module:
        kernel = self.module.entry
        entry = (kernel.name, tuple(Uni.GRID for _ in kernel.params))
        stack = self.stack
        stack.append(entry)
        pushed = {entry: 0}
        while stack:
            key = stack[-1]
            try:
                fn = self.analyse(key)
            except _NeedSummary as need:
                stack.append(need.key)
                pushed[need.key] = len(self.done)
                continue
            if key in self.assumed and fn.return_uni > self.assumed[key]:  # recursive calls assumed too narrow
                self.assumed[key] = fn.return_uni
                for stale in list(self.done)[pushed[key]:]:
                    del self.done[stale]
                continue
            self.done[key] = fn
            stack.pop()
        out = copy.copy(self.module)
        out.functions = {fn.name: fn for fn in self.done.values()}
        out.kernel = self.done[entry].name
        return out


def analyse(module: N.Module) -> N.Module:
    """An analysed copy of ``module``: every node's ``uni`` set, device functions specialised on levels."""
    return _Pass(module).run()
