"""What the compiled back end translates, checked before it generates anything: a whitelist of IR node
classes, their fields, the value types and the launch arguments it knows. A node class, a field, a type or an
argument it does not know is ``NotCompiled`` with the reason, so ``backend="auto"`` runs the lanes back end:
when the front end grows a construct (a new node, or a new field on a known one), the compiled back end
refuses it until someone teaches it the construct, never runs it by rules that are no longer the lanes back
end's.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir import nodes as N
from ...ir.types import Array, NoneType, RecordRef, Scalar, Tuple, Type
from ...ir.walk import children, walk_stmts
from .flatten import SPECIAL_CODE
from .values import CTOR, NotCompiled

#: the node classes the compiled back end translates, with the fields it reads ("line", and an expression's
#: "type" and "uni", are every node's). A field a class has beyond these must hold its default.
KNOWN = {
    N.Const: ("value",), N.Var: ("name",), N.Special: ("name",), N.Cast: ("value",),
    N.Unary: ("op", "operand"), N.Binary: ("op", "left", "right"), N.Compare: ("op", "left", "right"),
    N.Logical: ("op", "left", "right"), N.Select: ("cond", "then", "orelse"), N.Let: ("name", "value", "body"),
    N.MakeTuple: ("items",), N.TupleItem: ("value", "index"), N.TupleIndex: ("value", "index"),
    N.Trap: ("message",), N.ConstArray: ("name", "data", "by_pointer"), N.Load: ("array", "index"),
    N.ArrayShape: ("array", "dim"), N.ArraySize: ("array",), N.Intrinsic: ("name", "args"),
    N.Fma: ("a", "b", "c"), N.Call: ("function", "args"),
    N.Atomic: ("op", "array", "index", "value", "compare", "result_used"),
    N.Shuffle: ("kind", "mask", "value", "lane"), N.Vote: ("kind", "mask", "predicate"),
    N.Match: ("kind", "mask", "value"), N.ActiveMask: (), N.BarrierReduce: ("op", "predicate"),
    N.Assign: ("target", "value"), N.Store: ("array", "index", "value"), N.ExprStmt: ("value",),
    N.SharedDecl: ("target", "name", "shape", "dtype", "dynamic", "decl"),
    N.LocalDecl: ("target", "name", "shape", "dtype", "decl"), N.If: ("cond", "body", "orelse", "uni"),
    N.ForRange: ("var", "start", "stop", "step", "body", "trip", "uni"), N.While: ("cond", "body", "uni"),
    N.Break: ("uni",), N.Continue: ("uni",), N.Return: ("value", "uni"), N.Barrier: (), N.SyncWarp: ("mask",),
    N.Fence: ("scope",), N.Print: ("items",),
}
_COMMON = {"line", "type", "uni"}
#: what an unknown field's value means to a reader of the reason
_FIELD_WORDS = {(N.Trap, "raised"): "the kernel's own raise", (N.Barrier, "grid"): "a grid group's sync()"}


def check_type(t: Type, what: str) -> None:
    if isinstance(t, RecordRef):
        raise NotCompiled(f"{what}: records are not compiled")
    if isinstance(t, Tuple):
        for it in t.items:
            check_type(it, what)
        return
    if isinstance(t, Array):
        if not isinstance(t.dtype, Scalar):
            raise NotCompiled(f"{what}: arrays of records are not compiled")
        check_type(t.dtype, what)
        return
    if isinstance(t, NoneType):
        return
    if not isinstance(t, Scalar) or t.name not in CTOR:
        raise NotCompiled(f"{what}: values of type {t} are not compiled")


def _check_fields(node: N.Node) -> None:
    cls = type(node)
    known = KNOWN.get(cls)
    if known is None:
        raise NotCompiled(f"{cls.__name__} {'expressions' if isinstance(node, N.Expr) else 'statements'} "
                          f"(line {node.line}) are not compiled")
    for f in dataclasses.fields(node):
        if f.name in _COMMON or f.name in known:
            continue
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
        value = getattr(node, f.name)
        if default is dataclasses.MISSING or not (value is default or value == default):
            words = _FIELD_WORDS.get((cls, f.name), f"{cls.__name__}.{f.name}")
            raise NotCompiled(f"{words} (line {node.line}) is not compiled")


def _check_expr(e: N.Expr) -> None:
    _check_fields(e)
    check_type(e.type, f"line {e.line}")
    if isinstance(e, N.Special) and e.name not in SPECIAL_CODE:
        raise NotCompiled(f"the special value {e.name} (line {e.line}) is not compiled")
    for c in children(e):
        if isinstance(c, N.Expr):
            _check_expr(c)


def check_module(module: N.Module) -> None:
    """``NotCompiled`` unless every function of ``module`` uses only what this back end knows."""
    from ..lanes.barriers import skipped_only_by_exiting
    from ..lanes.recursion import recursive_functions

    recursive = recursive_functions(module)
    if recursive:
        raise NotCompiled(f"recursive device functions ({', '.join(sorted(recursive))}) are not compiled")
    leaving = skipped_only_by_exiting(module.entry)
    kinds: dict[int, set[bool]] = {}
    for fn in module.functions.values():
        for s in walk_stmts(fn.body):
            if isinstance(s, N.Barrier):
                kinds.setdefault(s.line, set()).add(id(s) in leaving)
    for line, k in kinds.items():
        if len(k) > 1:
            raise NotCompiled(f"barriers on line {line} that some threads skip only by leaving and others not")
    for fn in module.functions.values():
        for p in fn.params:
            check_type(p.type, f"parameter {p.name!r}")
        if fn.return_type is not None:
            check_type(fn.return_type, f"what {fn.py_name!r} returns")
        for s in walk_stmts(fn.body):
            _check_fields(s)
            if isinstance(s, (N.SharedDecl, N.LocalDecl)):
                check_type(s.dtype, f"the array {s.name!r}")
            for c in children(s):
                if isinstance(c, N.Expr):
                    _check_expr(c)


def check_args(args: tuple) -> None:
    """``NotCompiled`` for launch arguments the compiled back end does not bind: tuples (the lanes back end
    passes their items) and arrays of anything but booleans, integers and floats."""
    for k, v in enumerate(args):
        if isinstance(v, (np.datetime64, np.timedelta64)):
            raise NotCompiled(f"argument {k} is a {type(v).__name__}, which is not compiled")
        if isinstance(v, tuple):
            raise NotCompiled(f"argument {k} is a tuple, which is not compiled")
        if isinstance(v, np.ndarray) and (v.dtype.kind not in "biuf" or v.dtype.name not in CTOR):
            raise NotCompiled(f"argument {k} is an array of {v.dtype}, which is not compiled")
