"""Generic traversal of IR nodes: their sub-expressions and nested statement blocks, in evaluation order."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from .nodes import Expr, Node, Stmt

_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(node: Node) -> tuple[str, ...]:
    cls = type(node)
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("line", "type", "uni"))
        _FIELDS[cls] = names
    return names


def children(node: Node) -> Iterator[Expr]:
    """The expressions directly inside ``node`` (not inside its nested statements), in evaluation order."""
    for name in _fields(node):
        v = getattr(node, name)
        if isinstance(v, Expr):
            yield v
        elif isinstance(v, list):
            for item in v:
                if isinstance(item, Expr):
                    yield item


def blocks(stmt: Stmt) -> Iterator[list[Stmt]]:
    """The statement lists nested in ``stmt`` (an ``If``'s two branches, a loop's body)."""
    for name in ("body", "orelse"):
        v = getattr(stmt, name, None)
        if v is not None:
            yield v


def replace_children(node: Node, f: Callable[[Expr], Expr]) -> None:
    """Replace every expression directly inside ``node`` by ``f(expression)``, in place."""
    for name in _fields(node):
        v = getattr(node, name)
        if isinstance(v, Expr):
            setattr(node, name, f(v))
        elif isinstance(v, list) and any(isinstance(item, Expr) for item in v):
            setattr(node, name, [f(item) if isinstance(item, Expr) else item for item in v])


def walk_exprs(e: Expr) -> Iterator[Expr]:
    """``e`` and every expression inside it (iteratively: expressions may be deep)."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(list(children(x))))


def walk_stmts(body: list[Stmt]) -> Iterator[Stmt]:
    """Every statement of ``body`` and of the blocks nested in it, in order."""
    stack = list(reversed(body))
    while stack:
        s = stack.pop()
        yield s
        nested = list(blocks(s))
        for b in reversed(nested):
            stack.extend(reversed(b))
