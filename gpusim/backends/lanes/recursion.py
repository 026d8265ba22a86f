"""Lanes back end: which device functions recurse. Each is generated as a Python function that returns at once
for an empty mask and counts its nesting (``FunctionGen.generate``, ``Runtime.recurse``)."""

from __future__ import annotations

from ...ir import nodes as N
from ...ir.walk import children, walk_exprs, walk_stmts


def recursive_functions(module: N.Module) -> set[str]:
    """The module's functions that can call themselves, directly or through others."""
    if len(module.functions) < 2:  # a kernel alone (a kernel is never called)
        return set()
    calls = {name: {e.function for s in walk_stmts(fn.body) for c in children(s) for e in walk_exprs(c)
                    if isinstance(e, N.Call)} for name, fn in module.functions.items()}
    out = set()
    for name in calls:
        seen, stack = set(), list(calls[name])
        while stack:
            f = stack.pop()
            if f == name:
                out.add(name)
                break
            if f not in seen:
                seen.add(f)
                stack.extend(calls.get(f, ()))
    return out
