"""Every node of a syntax tree, listed once per tree: ``all_nodes(tree)`` is ``ast.walk(tree)`` as a tuple.

The front end walks a function's tree many times per compilation (its subset check, its assigned names, the
compile-time parameters of a device function, ...), and one tree serves every compilation of its code
(``compiler.parsed_source``). ``ast.walk`` is slow for what it does (a generator per node), so the list is
made once and kept as long as the tree lives. Sound because the trees the front end reads are never changed
after they are parsed and folded: the lowering builds new nodes, it does not edit the tree's.
"""

from __future__ import annotations

import ast
import weakref

_NODES: weakref.WeakKeyDictionary[ast.AST, tuple[ast.AST, ...]] = weakref.WeakKeyDictionary()


def all_nodes(tree: ast.AST) -> tuple[ast.AST, ...]:
    """``tree`` and every node below it, in ``ast.walk``'s order (breadth first)."""
    found = _NODES.get(tree)
    if found is None:
        out = [tree]
        k = 0
        while k < len(out):
            out.extend(ast.iter_child_nodes(out[k]))
            k += 1
        found = _NODES[tree] = tuple(out)
    return found


def stored_names(tree: ast.AST) -> frozenset[str]:
    """The names ``tree`` assigns anywhere inside it (``Name`` nodes in a store context), nested functions'
    included."""
    found = _STORED.get(tree)
    if found is None:
        found = _STORED[tree] = frozenset(n.id for n in all_nodes(tree)
                                          if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return found


_STORED: weakref.WeakKeyDictionary[ast.AST, frozenset[str]] = weakref.WeakKeyDictionary()
