"""Lanes back end, the step budget: the work of each stretch of a kernel, counted before it runs.

A launch may do at most ``max_steps`` steps of work (``gpusim.launch``); past that it ends with a
``KernelTimeout`` fault. A **step** is one simple NumPy operation on one lane (about a nanosecond), so the
budget bounds the time a launch takes whatever its size: an endless loop over one thread and one over 2^24
threads both stop within seconds, and the count is the same on every machine (no clock is read).

What is charged, by ``rt.tick(line, mask, fixed, lanes)`` in the generated code:

* at the entry of every function (the kernel once per chunk, a device function at every call): its
  straight-line code — every statement outside its loops, both branches of every ``if``;
* at every iteration of a loop: the loop's condition and bookkeeping and its body's straight-line code
  (a nested loop charges its own iterations, a called device function its own entry).

Each operation costs ``fixed`` steps of overhead (a NumPy call, an observer's bookkeeping) times
``OVERHEAD`` plus, for an operation on lane vectors, ``lanes`` steps per lane of the chunk: NumPy runs over
the whole vector, masked lanes too. A GRID value is a scalar and costs only the overhead, except memory
accesses, whose observers see every lane. The weights below were measured on this back end (CPU time per
operation at 1 and 65,536 lanes, instrumented): a fused multiply-add on float64 is some forty NumPy
operations per lane, a memory access a hundred calls of overhead.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import nodes as N
from ...ir.nodes import Uni
from ...ir.types import Scalar
from ...ir.walk import blocks, children, walk_exprs

#: steps one operation's fixed overhead counts as (a NumPy call is about the cost of a thousand lanes)
OVERHEAD = 1024

#: (fixed, per lane) weights of an expression node in simple operations; a node not listed costs (1, 1)
_EXPR = {
    N.Const: (0, 0), N.Var: (0, 0), N.Special: (0, 0), N.ConstArray: (1, 0), N.FieldView: (1, 0),
    N.ArrayView: (8, 4), N.Reshape: (8, 4), N.Reinterpret: (8, 4),
    N.ArrayShape: (0, 0), N.ArraySize: (0, 0), N.MakeTuple: (0, 0), N.TupleItem: (0, 0),
    N.Let: (1, 0), N.TupleIndex: (4, 2),
    N.Trap: (4, 1), N.Intrinsic: (2, 2), N.Call: (8, 2), N.Shuffle: (64, 24), N.Vote: (48, 16),
    N.Match: (64, 32), N.ActiveMask: (16, 8), N.BarrierReduce: (48, 24),
}
#: memory accesses, as an instrumented launch does them (observers: races, metrics, counts, trace). A launch
#: without instrumentation is charged the same, so observers never change where a runaway kernel stops
_MEMORY = {N.Load: (96, 40), N.Atomic: (128, 96)}
_STORE = (96, 64)
#: statements (their expressions are counted apart): a merge under a mask, a barrier's checks and epochs
_STMT = {N.Assign: (0, 1), N.Barrier: (24, 16), N.SyncWarp: (32, 16), N.SharedDecl: (8, 2),
         N.LocalDecl: (8, 2), N.Print: (32, 8), N.If: (3, 3), N.Break: (1, 1), N.Continue: (1, 1),
         N.Return: (1, 1)}
#: a loop iteration's own bookkeeping: the tick, the range test, the mask updates
_LOOP = (8, 6)


@dataclass
class Work:
    """Steps of overhead (``fixed``, times ``OVERHEAD``) and per lane (``lanes``) of one stretch of code."""

    fixed: int = 0
    lanes: int = 0

    def add(self, cost: tuple[int, int], vector: bool) -> None:
        self.fixed += cost[0]
        if vector:
            self.lanes += cost[1]


def _expr_cost(e: N.Expr) -> tuple[tuple[int, int], bool]:
    """(weights, vector?) of one expression node."""
    cls = type(e)
    if cls in _MEMORY:
        return _MEMORY[cls], True
    vector = e.uni > Uni.GRID
    if cls is N.Fma:
        return ((20, 40) if e.type.bits == 64 else (4, 6)), vector
    if cls is N.Binary and e.op in ("floordiv", "mod", "pow"):
        return (8, 6), vector
    if cls in (N.Binary, N.Intrinsic) and isinstance(e.type, Scalar) and e.type.is_float:
        base = _EXPR.get(cls, (1, 1))
        return (base[0] + 4, base[1]), vector        # the FLOP counter's call
    return _EXPR.get(cls, (1, 1)), vector


def _add_exprs(work: Work, node: N.Node) -> None:
    for top in children(node):
        for e in walk_exprs(top):
            cost, vector = _expr_cost(e)
            work.add(cost, vector)


def straight_line(body: list[N.Stmt]) -> Work:
    """The work of ``body`` outside its loops' bodies (a loop's start, stop and step are counted here)."""
    work = Work()
    stack = list(body)
    while stack:
        s = stack.pop()
        if isinstance(s, N.While):
            continue                                   # its condition is evaluated per iteration
        if isinstance(s, N.Store):
            work.add(_STORE, True)
        else:
            vector = getattr(s, "uni", Uni.LANE) > Uni.GRID or isinstance(s, (N.Barrier, N.SyncWarp))
            if isinstance(s, N.Assign):
                vector = s.value.uni > Uni.GRID
            work.add(_STMT.get(type(s), (1, 0)), vector)
        _add_exprs(work, s)
        if not isinstance(s, N.ForRange):
            for b in blocks(s):
                stack.extend(b)
    return work


def iteration(loop: N.ForRange | N.While) -> Work:
    """The work of one iteration of ``loop``: its bookkeeping, its condition, its body's straight-line code."""
    work = straight_line(loop.body)
    work.add(_LOOP, loop.uni > Uni.GRID)
    if isinstance(loop, N.While):
        _add_exprs(work, loop)
    return work
