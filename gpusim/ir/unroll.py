"""Which loops numba-cuda's compiler (NVVM, an LLVM) unrolls at run time, and how: read from the IR.

LLVM unrolls a small innermost loop whose trip count it can compute on entry (a ``range`` loop) by a count
``U`` and runs the ``T mod U`` iterations left over in a *remainder* loop of single iterations, before the
unrolled loop (a *prolog*) or after it (an *epilog*). A warp executes each copy of the body as one instruction
per source access, so where the lanes of one warp have different trip counts the GPU issues a different
number of instructions than one per iteration: a warp runs ``max(T mod U)`` remainder iterations and
``max(T div U)`` unrolled ones (``U`` instructions each). ``gpusim.observe.unroll`` counts the requests that way.

What the sm_90 PTX of numba-cuda 0.30.4 shows (``cuda.compile_ptx``, NVVM 13; the kernels are in
``tests/gpusim/test_metrics_compiler_effects.py`` and the evidence in docs/metrics.md):

* ``U`` = 4 for a body with up to 5 memory accesses (loads, stores, atomics; float arithmetic, divisions,
  ``if`` inside, ``continue``, shuffles did not change it), 2 for 6 to 8; larger bodies are not modelled.
* the remainder is an **epilog** when the loop header has an integer value that starts at a constant: the
  loop variable of ``range(c, ...)`` with a constant ``c``, or an integer local the body updates whose value on
  entry is a constant (LLVM's ``isEpilogProfitable``); else a **prolog**.
* a loop with a ``break`` or a ``return`` (several exits), a loop containing another loop, a barrier or a call
  of a device function is not unrolled this way (or not modelled).

Only loops whose trip count can differ between the lanes of a warp (level LANE) change any count.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import nodes as N
from .nodes import Uni
from .walk import walk_exprs, walk_stmts

#: the most memory accesses in a body LLVM unrolls by 4, and by 2 (larger bodies: not modelled)
MAX_ACCESSES = {4: 5, 2: 8}


@dataclass(frozen=True)
class Unroll:
    """How a loop is unrolled: by ``count``, with the remainder before (``epilog`` False) or after the body."""

    count: int
    epilog: bool


def plan_loops(fn: N.Function) -> dict[int, Unroll]:
    """``id(loop) -> Unroll`` for the per-lane ``range`` loops of ``fn`` that the compiler unrolls."""
    plans: dict[int, Unroll] = {}

    def visit(body: list[N.Stmt]) -> None:
        for k, s in enumerate(body):
            if isinstance(s, N.ForRange) and s.uni == Uni.LANE:
                plan = _plan(s, body[:k])
                if plan is not None:
                    plans[id(s)] = plan
            for name in ("body", "orelse"):
                inner = getattr(s, name, None)
                if inner:
                    visit(inner)

    visit(fn.body)
    return plans


def _plan(loop: N.ForRange, before: list[N.Stmt]) -> Unroll | None:
    accesses = 0
    for s in walk_stmts(loop.body):
        if isinstance(s, (N.ForRange, N.While, N.Break, N.Return, N.Barrier, N.SyncWarp)):
            return None
        if isinstance(s, N.Store):
            accesses += 1
        for e in _exprs(s):
            if isinstance(e, (N.Call, N.BarrierReduce)):
                return None
            if isinstance(e, (N.Load, N.Atomic)):
                accesses += 1
    count = next((u for u, most in MAX_ACCESSES.items() if accesses <= most), None)
    if count is None:
        return None
    return Unroll(count, _constant_start(loop, before))


def _exprs(s: N.Stmt):
    from .walk import children

    for e in children(s):
        yield from walk_exprs(e)


def _constant_start(loop: N.ForRange, before: list[N.Stmt]) -> bool:
    """Does an integer value of the loop header start at a constant? (then LLVM puts the remainder last)"""
    if isinstance(loop.start, N.Const):
        return True
    updated = {s.target for s in walk_stmts(loop.body) if isinstance(s, N.Assign)
               and isinstance(s.value.type, N.Scalar) and (s.value.type.is_int or s.value.type.is_bool)}
    for name in updated:
        for s in reversed(before):               # the last statement before the loop that sets it
            if isinstance(s, N.Assign) and s.target == name:
                if isinstance(s.value, N.Const):
                    return True
                break
            if any(isinstance(x, N.Assign) and x.target == name for x in walk_stmts([s])):
                break
    return False
