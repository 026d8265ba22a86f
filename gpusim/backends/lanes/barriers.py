"""Lanes back end: which barriers the threads that skip them skip only on their way out of the kernel.

A barrier (``syncthreads``, a grid group's ``sync()``) that some live threads of the block (or grid) do not
reach is undefined by the CUDA Programming Guide, and gpusim reports it (``BarrierDivergence``). One such
case runs the same on every GPU: when the threads that skip it have nothing left to do but leave the kernel,
a GPU's barrier stops waiting for them once they have exited (exited threads do not block a barrier,
docs/gpu-semantics.md), and lanes executing the branch first give the same results. numba-cuda's own
documentation relies on it (its sessionization example syncs the grid inside ``if is_boundary:``, the
kernel's last statement). Such a barrier is still a fault, marked ``skipped_by_exiting``, so a policy can tell
it apart from a barrier the skipping threads would run past (the drop-in reports it rather than raising).

The rule is syntactic and conservative: the barrier is in the kernel itself (not a device function), every
statement around it is an ``if`` (no loop: a thread skipping it in one iteration runs the next), the other
branch of each of those ``if``s and every statement after each of them does nothing but return.
"""

from __future__ import annotations

from ...ir import nodes as N


def skipped_only_by_exiting(fn: N.Function) -> set[int]:
    """The ``id``s of the kernel's ``Barrier`` nodes that a thread can skip only on its way out."""
    found: set[int] = set()
    if fn.is_kernel:
        _visit(fn.body, True, found)
    return found


def _inert(stmts: list[N.Stmt]) -> bool:
    return all(isinstance(s, N.Return) for s in stmts)


def _visit(stmts: list[N.Stmt], skippers_leave: bool, found: set[int]) -> None:
    """``skippers_leave``: a thread that skips the rest of this block from any point in it only leaves."""
    for i, s in enumerate(stmts):
        if isinstance(s, N.Barrier) and skippers_leave:
            found.add(id(s))
        elif isinstance(s, N.If):
            after = skippers_leave and _inert(stmts[i + 1:])
            _visit(s.body, after and _inert(s.orelse), found)
            _visit(s.orelse, after and _inert(s.body), found)
