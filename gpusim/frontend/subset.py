"""The kernel subset by syntax alone: constructs no kernel may contain, found before anything is typed."""

from __future__ import annotations

import ast
import weakref

from ..faults import KernelCompileError, UnsupportedConstruct
from .names import CONSTRUCT_NAMES
from .source import Source
from .tree_nodes import all_nodes, stored_names


def assigned_names(tree: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in tree.args.args} | ({tree.args.vararg.arg} if tree.args.vararg else set())
    names |= stored_names(tree)
    return names


ALLOWED_STMTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.For, ast.While, ast.Break, ast.Continue,
                 ast.Return, ast.Expr, ast.Pass, ast.FunctionDef, ast.Raise)


def check_subset(src: Source, tree: ast.FunctionDef) -> None:
    """Reject constructs no kernel may contain, wherever they are (before anything is typed). ``*t`` as a call's
    argument is left to the lowering (a tuple spread into a builtin's or math function's arguments)."""
    if tree in _ACCEPTED:  # the check reads the tree alone, and one tree serves every compilation of its code
        return
    nodes = all_nodes(tree)
    spread = {id(a) for n in nodes if isinstance(n, ast.Call) for a in n.args if isinstance(a, ast.Starred)}
    for node in nodes:
        if node is tree or id(node) in spread:
            continue
        if type(node) in CONSTRUCT_NAMES:
            raise error(src, node, f"{CONSTRUCT_NAMES[type(node)]} cannot be used in a kernel")
        if isinstance(node, ast.stmt) and not isinstance(node, ALLOWED_STMTS):
            raise error(src, node, f"the statement {type(node).__name__} is not supported in a kernel")
        if isinstance(node, (ast.For, ast.While)) and node.orelse:
            raise error(src, node, f"{'for' if isinstance(node, ast.For) else 'while'}/else is not supported "
                                   "in a kernel")
        if isinstance(node, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops):
            raise error(src, node, "`in` comparisons are not supported in a kernel")
        if isinstance(node, ast.Compare) and any(isinstance(o, (ast.Is, ast.IsNot)) for o in node.ops) and not (
                len(node.ops) == 1 and (not isinstance(node.comparators[0], ast.Constant)
                                        or node.comparators[0].value in (None, True, False))):
            # two values (``a is b``): the front end takes enum members only (frontend.enums)
            raise error(src, node, "`is` compares with None, True or False only in a kernel")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            raise error(src, node, "the @ operator is not supported in a kernel")
        if isinstance(node, ast.Assign) and len(node.targets) != 1:
            raise error(src, node, "chained assignment (a = b = c) is not supported in a kernel")
    _ACCEPTED.add(tree)


#: the trees ``check_subset`` has accepted (a tree it rejects is checked again: the same error again)
_ACCEPTED: weakref.WeakSet[ast.FunctionDef] = weakref.WeakSet()


def error(src: Source, node: ast.AST | int, message: str, cls: type = UnsupportedConstruct) -> KernelCompileError:
    lineno = node if isinstance(node, int) else getattr(node, "lineno", 0)
    e = cls(message, filename=src.filename, lineno=lineno, source_line=src.line(lineno))
    e.node = None if isinstance(node, int) else node  # what failed (instance_checks.survives_partial_typing)
    return e
