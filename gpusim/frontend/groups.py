"""Cooperative groups: ``cuda.cg.this_grid()`` and its ``sync()``, the barrier every thread of the grid reaches.

numba-cuda's grid group is an opaque handle; here it is a scalar of its own type (``GridGroup``, held as 0) so
that it can be named (``g = cuda.cg.this_grid()``) and passed on, and ``g.sync()`` is a grid-wide ``Barrier``.
A kernel with one is launched as numba-cuda launches it, cooperatively: every block at once
(``gpusim.launch``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..ir import nodes as N
from ..ir.types import Scalar


@dataclass(frozen=True)
class GridGroup(Scalar):
    """``cuda.cg.this_grid()``'s value."""

    def __str__(self) -> str:
        return "grid group"


GRID_GROUP = GridGroup("int32")


class GroupLowering:
    """Mixed into ``FunctionLowering``."""

    def this_grid(self, node: ast.Call) -> N.Expr:
        if node.args or node.keywords:
            raise self.error(node, "cuda.cg.this_grid() takes no arguments")
        return N.Const(0, type=GRID_GROUP, line=node.lineno)

    def group_sync(self, node: ast.Call) -> list[N.Stmt] | None:
        """``g.sync()`` of a grid group (None when ``node`` is another call)."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "sync"):
            return None
        base = func.value
        if isinstance(base, ast.Name) and base.id not in self.locals:
            return None  # a global's method: not a group
        if isinstance(base, ast.Name) and self.env.get(base.id) != GRID_GROUP:
            return None
        group = self.expr(base)
        if group.type != GRID_GROUP:
            return None
        if node.args or node.keywords:
            raise self.error(node, "a grid group's sync() takes no arguments")
        return [N.Barrier(grid=True, line=node.lineno)]


def grid_synchronised(module: N.Module) -> bool:
    """Does the kernel, or a device function it calls, sync its grid (so it must run as one cooperative
    launch)?"""
    from ..ir.walk import walk_stmts

    return any(isinstance(s, N.Barrier) and s.grid for fn in module.functions.values() for s in walk_stmts(fn.body))
