"""Facts the compiled back end needs about a function's IR before it generates code.

* ``maybe_unassigned``: the ``Var`` reads that may find their local unassigned (the lanes back end's Python
  local still None, or unbound), judged as the lanes back end runs a chunk: a branch only some lanes take may
  run or not, a loop body may run zero times.
* ``lanes_scalar``: whether the lanes back end holds a value as one NumPy scalar rather than a lane vector
  (an atomic at such an index is aggregated per warp; a shuffle of such a value returns it unchanged). The
  answer is True, False, or chunk-level code reading the locals' states.
"""

from __future__ import annotations

from ...ir import nodes as N
from ...ir.nodes import Uni
from ...ir.walk import children

_SCALAR_SPECIALS = {"blockDim.x", "blockDim.y", "blockDim.z", "gridDim.x", "gridDim.y", "gridDim.z", "warpsize"}


def maybe_unassigned(fn: N.Function) -> set[int]:
    """ids of ``Var`` nodes that may read a local before any assignment reached it."""
    out: set[int] = set()

    def exprs(e: N.Expr, assigned: set[str]) -> None:
        if isinstance(e, N.Var):
            if e.name not in assigned:
                out.add(id(e))
            return
        if isinstance(e, N.Let):
            exprs(e.value, assigned)
            exprs(e.body, assigned | {e.name})
            return
        for c in children(e):
            exprs(c, assigned)

    def block(body: list[N.Stmt], assigned: set[str]) -> set[str]:
        assigned = set(assigned)
        for s in body:
            if isinstance(s, N.If):
                exprs(s.cond, assigned)
                a = block(s.body, assigned)
                b = block(s.orelse, assigned)
                if s.uni == Uni.GRID:
                    assigned = a & b
            elif isinstance(s, N.ForRange):
                for x in (s.start, s.stop, s.step):
                    exprs(x, assigned)
                block(s.body, assigned | {s.var})
            elif isinstance(s, N.While):
                exprs(s.cond, assigned)
                block(s.body, assigned)
            else:
                for c in children(s):
                    exprs(c, assigned)
                if isinstance(s, N.Assign):
                    assigned.add(s.target)
                elif isinstance(s, (N.SharedDecl, N.LocalDecl)):
                    assigned.add(s.target)
        return assigned

    block(fn.body, {p.name for p in fn.params})
    return out


def both(a, b):
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    return f"({a} and {b})"


def lanes_scalar(e: N.Expr, state) -> object:
    """True / False / code: is ``e`` a NumPy scalar in the lanes back end? ``state(var)`` gives the code of a
    lane local's state (1: scalar)."""
    if e.uni == Uni.GRID:
        return True
    if isinstance(e, N.Const):
        return True
    if isinstance(e, N.Var):
        return state(e.name)
    if isinstance(e, N.Special):
        return e.name in _SCALAR_SPECIALS
    if isinstance(e, (N.Atomic, N.Vote, N.Match, N.ActiveMask, N.BarrierReduce)):
        return False
    if isinstance(e, N.Load):
        if e.array.type.space in ("shared", "local"):
            return False
        r = True
        for i in e.index:
            r = both(r, lanes_scalar(i, state))
        return r
    if isinstance(e, N.Shuffle):
        return lanes_scalar(e.value, state)
    if isinstance(e, N.Call):
        return False
    if isinstance(e, N.Intrinsic) and e.name == "selp":
        return False
    if isinstance(e, N.Select):
        if e.cond.uni != Uni.GRID:
            return False
        return both(lanes_scalar(e.then, state), lanes_scalar(e.orelse, state))
    if isinstance(e, N.Logical):
        if e.left.uni != Uni.GRID and e.type.is_bool is False:
            return False
        return both(lanes_scalar(e.left, state), lanes_scalar(e.right, state))
    if isinstance(e, N.Let):
        return lanes_scalar(e.body, state)
    if isinstance(e, N.TupleIndex) and e.index.uni != Uni.GRID:
        return False
    r = True
    for c in children(e):
        r = both(r, lanes_scalar(c, state))
    return r
