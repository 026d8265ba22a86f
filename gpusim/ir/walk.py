"""Generic traversal of IR nodes: their sub-expressions and nested statement blocks, in evaluation order; and
the structural copy the passes make (``copy_tree``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from .nodes import Expr, Function, Module, Node, Param, Stmt

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


def copy_tree(node: Any) -> Any:
    """A copy of ``node`` (a ``Node``, ``Function``, ``Module``, or a list of them) and of every node, list and
    dict below it, as ``copy.deepcopy`` makes it (a node reached twice is copied once), but sharing what no
    pass changes: types (frozen), constants' values and arrays (``ConstArray`` shares its data, as its
    ``__deepcopy__`` does). A front end's module is copied many times per compilation; this is the cheap way."""
    return _copy(node, {})


_COPIED = (Node, Param, Function, Module)


def _copy(v: Any, memo: dict[int, Any]) -> Any:
    if isinstance(v, list):
        return [_copy(x, memo) if isinstance(x, _CONTAINERS) else x for x in v]
    if isinstance(v, _COPIED):
        hit = memo.get(id(v))
        if hit is not None:
            return hit
        new = object.__new__(type(v))
        memo[id(v)] = new
        new.__dict__.update({k: _copy(x, memo) if isinstance(x, _CONTAINERS) else x for k, x in v.__dict__.items()})
        return new
    if isinstance(v, dict):
        return {k: _copy(x, memo) if isinstance(x, _CONTAINERS) else x for k, x in v.items()}
    if isinstance(v, tuple) and any(isinstance(x, _CONTAINERS) for x in v):
        return tuple(_copy(x, memo) if isinstance(x, _CONTAINERS) else x for x in v)
    return v


_CONTAINERS = (list, dict, tuple) + _COPIED
