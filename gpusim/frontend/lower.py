"""Lowering one function's syntax tree to typed IR: statements, and the flow of local types through them.

Types flow as numba's do after its SSA construction: a local has the type of its last assignment, and where
control flow merges (after an ``if``, at a loop's head, after a loop) a local reaching it with different
types gets their unification, by a ``Cast`` on each incoming path. A loop body is lowered again until the
types at its head are stable (a handful of rounds at most: types only widen). A merge that cannot unify
(an array on one path, a number on the other) is an error only if the local is read afterwards, as in numba.

One simplification: types reaching a loop's exit through a ``break`` are unified with the loop's head too,
so such a local has the widened type inside the loop (numba keeps it narrower there).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..faults import KernelCompileError, UnsupportedConstruct
from ..ir import nodes as N
from ..ir.types import BOOL, INT64, NONE, Array, CharSeq, Optional, RecordRef, Scalar, Tuple, Type
from . import typing as ty
from .array_methods import ArrayMethodLowering
from .calls import CallLowering
from .closures import ClosureLowering
from .datetimes import DateTimeLowering
from .enums import EnumLowering
from .exceptions import ExceptionLowering
from .expressions import ExprLowering, TypeConflict
from .groups import GroupLowering
from .instance_checks import InstanceCheckLowering
from .iteration import IterationLowering
from .numeric_calls import NumericCallLowering
from .optionals import OptionalLowering
from .records import RecordLowering, is_record_array
from .slicing import SliceLowering
from .source import Source
from .subset import assigned_names, check_subset, error
from .tree_nodes import all_nodes, stored_names
from .ufuncs import UfuncLowering
from .vectors import VectorLowering

if TYPE_CHECKING:
    from .compiler import Builder

MAX_LOOP_ROUNDS = 12


def leaf_name(name: str, path: tuple[int, ...]) -> str:
    return f"{name}$" + "_".join(str(k) for k in path)


def tuple_leaves(name: str, t: Type, path: tuple[int, ...] = ()) -> list[tuple[str, Type]]:
    """The kernel parameters a tuple argument ``name`` of type ``t`` arrives as: its arrays and scalars, depth
    first (``x$0``, ``x$1_0``, ...); the launch passes the argument's items in the same order."""
    if not isinstance(t, Tuple):
        return [(leaf_name(name, path), t)]
    out: list[tuple[str, Type]] = []
    for k, it in enumerate(t.items):
        out.extend(tuple_leaves(name, it, path + (k,)))
    return out


class UnknownReturn(Exception):
    """A function calls itself before any of its ``return`` statements typed: ``compiler.Builder.lower_one``
    lowers it again in probe mode, where a statement that reaches the call ends its path
    (``FunctionLowering.block``), to find the types its other returns give (numba's rule)."""


@dataclass
class LoopContext:
    break_envs: list[dict[str, Type]] = field(default_factory=list)
    continue_envs: list[dict[str, Type]] = field(default_factory=list)


class FunctionLowering(ExprLowering, CallLowering, NumericCallLowering, UfuncLowering, IterationLowering,
                       RecordLowering, SliceLowering, ClosureLowering, ArrayMethodLowering, EnumLowering,
                       ExceptionLowering, GroupLowering, VectorLowering, DateTimeLowering, InstanceCheckLowering,
                       OptionalLowering):
    """Lowers one function for one tuple of argument types; ``builder`` supplies callees and globals."""

    def __init__(self, builder: Builder, func: Any, src: Source, key: str, arg_types: tuple[Type, ...],
                 is_kernel: bool, globals_: dict[str, Any], statics: tuple = ()):
        self.builder = builder
        self.func = func
        self.src = src
        self.key = key
        self.is_kernel = is_kernel
        self.globals = globals_
        self.tree = src.tree
        # compile-time arguments (functions, dtypes, integer literals and shapes passed to a device function)
        # are constants of this specialisation, as numba types them: names like globals, not parameters
        self.statics = statics
        self.cache_key = (func, statics) if statics else func
        fixed = dict(statics)
        self.params = [a.arg for a in self.tree.args.args if a.arg not in fixed]
        if self.tree.args.vararg is not None:  # *args: one tuple parameter (device functions only)
            self.params.append(self.tree.args.vararg.arg)
        self.arg_types = arg_types
        self.locals = assigned_names(self.tree) - set(fixed)
        cache = builder.global_cache(self.cache_key)
        cache.update(fixed)
        self.env: dict[str, Type] = {}
        #: the type each local was last assigned anywhere so far (a loop's later rounds see it at the head)
        self.seen_types: dict[str, Type] = {}
        #: locals assigned exactly once, from an integer constant: their value (``stores``)
        self.constants: dict[str, N.Const] = {}
        self._stores: dict[str, int] | None = None
        self.at_top = True
        self.live = True
        self.loops: list[LoopContext] = []
        self.returns: list[N.Return] = []
        #: locals whose value here may come from more than one assignment (numba's SSA phi: ``instance_checks``)
        self.merged: set[str] = set()
        #: the locals' types where a branch isinstance ruled out runs on past its ``if`` (``instance_checks``)
        self.ruled_out_path: dict[str, Type] | None = None
        #: lowered only to find the return types of a recursion (``compiler.UnknownReturn``)
        self.probe = False
        self.ntmp = 0
        self.line = self.tree.lineno

    # -- helpers ----------------------------------------------------------------------------------------
    def error(self, node: ast.AST | int, message: str, cls: type = UnsupportedConstruct) -> KernelCompileError:
        return error(self.src, node, message, cls)

    def stores(self, name: str) -> int:
        """How many times the function's own code assigns ``name`` (nested functions' assignments left out)."""
        if self._stores is None:
            counts: dict[str, int] = {}
            stack = list(self.tree.body)
            while stack:
                n = stack.pop()
                if isinstance(n, (ast.FunctionDef, ast.Lambda)):
                    continue
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    counts[n.id] = counts.get(n.id, 0) + 1
                stack.extend(ast.iter_child_nodes(n))
            for a in self.tree.args.args:
                counts[a.arg] = counts.get(a.arg, 0) + 1
            self._stores = counts
        return self._stores.get(name, 0)

    def tmp(self) -> str:
        self.ntmp += 1
        return f"$t{self.ntmp}"

    # -- the function -----------------------------------------------------------------------------------
    def lower(self) -> N.Function:
        tree = self.tree
        a = tree.args
        if a.kwarg or a.kwonlyargs or a.posonlyargs or (self.is_kernel and (a.vararg or a.defaults)):
            raise self.error(tree, "kernel parameters must be plain names (no *args, **kwargs or defaults; a device "
                                   "function may take *args and defaults)")
        check_subset(self.src, tree)
        params: list[N.Param] = []
        prologue: list[N.Stmt] = []
        for name, t in zip(self.params, self.arg_types):
            self.env[name] = t
            if self.is_kernel and isinstance(t, Tuple):
                # a tuple argument arrives as its items, one parameter each (``tuple_leaves``), and is built
                # again on entry: back ends see only arrays and scalars as kernel parameters
                leaves = tuple_leaves(name, t)
                params.extend(N.Param(n, lt) for n, lt in leaves)
                prologue.append(N.Assign(name, self.rebuild_tuple(name, t, tree.lineno), line=tree.lineno))
            else:
                params.append(N.Param(name, t))
        body = prologue + self.block(tree.body)
        ret: Type = NONE
        if not self.is_kernel:
            if self.live:  # the end is reachable: Python returns None there
                end = N.Return(None, line=self.last_line(tree))
                body.append(end)
                self.returns.append(end)
            ret = self.return_type()
        return N.Function(self.key, self.func.__name__, params, body, ret, self.is_kernel, self.src.filename,
                          tree.lineno)

    @staticmethod
    def rebuild_tuple(name: str, t: Tuple, line: int, path: tuple[int, ...] = ()) -> N.Expr:
        items: list[N.Expr] = []
        for k, it in enumerate(t.items):
            sub = path + (k,)
            items.append(FunctionLowering.rebuild_tuple(name, it, line, sub) if isinstance(it, Tuple)
                         else N.Var(leaf_name(name, sub), type=it, line=line))
        return N.MakeTuple(items, type=t, line=line)

    @staticmethod
    def last_line(tree: ast.AST) -> int:
        return max((getattr(n, "end_lineno", 0) or 0) for n in all_nodes(tree))

    def return_type(self) -> Type:
        values = [r for r in self.returns if r.value is not None]
        if not values:
            return NONE
        # a value on some paths and None on others (or an Optional returned): numba's Optional of the value type
        maybe = len(values) != len(self.returns) or any(isinstance(r.value.type, Optional) for r in values)

        def value_type(t: Type) -> Type:
            return t.value_type if isinstance(t, Optional) else t

        ret = value_type(values[0].value.type)
        for r in values[1:]:
            u = ty.unify(ret, value_type(r.value.type))
            if u is None:
                raise self.error(r.line, f"device function {self.func.__name__!r} returns {ret} and "
                                         f"{r.value.type}, which cannot be unified", KernelCompileError)
            ret = u
        if not maybe:
            for r in values:
                r.value = self.cast(r.value, ret)
            return ret
        return self.optional_returns(ret, values)

    # -- blocks and merges -------------------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt]) -> list[N.Stmt]:
        out: list[N.Stmt] = []
        for i, s in enumerate(stmts):
            if not self.live:
                break  # dead code after return/break/continue: Python compiles it, but it never runs
            self.line = s.lineno
            self.at_top = stmts is self.tree.body  # a statement every thread runs, once
            if self.probe:
                try:
                    out.extend(self.stmt(s))
                except UnknownReturn:  # probing a recursion's return types: this path needs the result
                    self.live = False
                continue
            out.extend(self.stmt(s))
            if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                self.merged -= stored_names(s)  # one assignment: the value has one definition again
            if self.ruled_out_path is not None:  # dead only because isinstance ruled a branch out: numba types it
                env, self.ruled_out_path = self.ruled_out_path, None
                if not self.live:
                    self.type_ruled_out(stmts[i + 1:], env)
        return out

    @staticmethod
    def join_type(old: Type, new: Type, line: int) -> Type:
        """The type of a local reaching one point with ``old`` on some paths and ``new`` on another."""
        if old == new or isinstance(old, TypeConflict):
            return old
        u = ty.unify(old, new)
        return u if u is not None else TypeConflict(old, new, line)

    def casts(self, env: dict[str, Type], target: dict[str, Type], line: int) -> list[N.Stmt]:
        """Assignments converting the locals of ``env`` to their types in ``target`` (where they differ)."""
        return [N.Assign(n, self.cast(N.Var(n, type=t, line=line), target[n]), line=line)
                for n, t in env.items()
                if n in target and target[n] != t and not isinstance(target[n], TypeConflict)]

    def merge(self, paths: list[tuple[dict[str, Type], list[N.Stmt]]], line: int) -> dict[str, Type]:
        """Unify the locals' types over ``paths`` (each an environment and the statement list that ends in
        it), appending casts to the lists; returns the merged environment."""
        merged: dict[str, Type] = {}
        for env, _ in paths:
            for name, t in env.items():
                merged[name] = self.join_type(merged[name], t, line) if name in merged else t
        for env, stmts in paths:
            casts = self.casts(env, merged, line)
            if casts:
                if stmts and isinstance(stmts[-1], (N.Break, N.Continue)):
                    stmts[-1:-1] = casts
                else:
                    stmts.extend(casts)
        return merged

    # -- statements ---------------------------------------------------------------------------------------
    def stmt(self, s: ast.stmt) -> list[N.Stmt]:
        line = s.lineno
        if isinstance(s, ast.Pass):
            return []
        if isinstance(s, ast.Expr):
            return self.expr_stmt(s)
        if isinstance(s, ast.Assign):
            return self.assign(s.targets[0], s.value, line)
        if isinstance(s, ast.AnnAssign):
            return [] if s.value is None else self.assign(s.target, s.value, line)
        if isinstance(s, ast.AugAssign):
            return self.augassign(s)
        if isinstance(s, ast.If):
            return self.if_stmt(s)
        if isinstance(s, ast.For):
            return self.for_stmt(s)
        if isinstance(s, ast.While):
            return self.while_stmt(s)
        if isinstance(s, (ast.Break, ast.Continue)):
            if not self.loops:
                raise self.error(s, f"{type(s).__name__.lower()} outside a loop")
            ctx = self.loops[-1]
            node = N.Break(line=line) if isinstance(s, ast.Break) else N.Continue(line=line)
            (ctx.break_envs if isinstance(s, ast.Break) else ctx.continue_envs).append(dict(self.env))
            node.env = dict(self.env)  # read (and removed) by fix_jumps once the loop's head types are known
            self.live = False
            return [node]
        if isinstance(s, ast.Return):
            return self.return_stmt(s)
        if isinstance(s, ast.FunctionDef):
            return self.nested_def(s)
        if isinstance(s, ast.Raise):
            return self.raise_stmt(s)
        raise self.error(s, f"the statement {type(s).__name__} is not supported in a kernel")  # pragma: no cover

    def return_stmt(self, s: ast.Return) -> list[N.Stmt]:
        value = None
        if s.value is not None and not (isinstance(s.value, ast.Constant) and s.value.value is None):
            if self.is_kernel:
                raise self.error(s, "a kernel cannot return a value (write results to an array)")
            value = self.expr(s.value)
        node = N.Return(value, line=s.lineno)
        self.returns.append(node)
        self.live = False
        return [node]

    def expr_stmt(self, s: ast.Expr) -> list[N.Stmt]:
        v = s.value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return []  # a string statement is a comment
        if isinstance(v, ast.Call):
            return self.call_stmt(v)
        return [N.ExprStmt(self.expr(v), line=s.lineno)]

    # assignments ----------------------------------------------------------------------------------------
    def assign(self, target: ast.AST, value: ast.AST, line: int) -> list[N.Stmt]:
        made = self.array_alloc(value, target) if isinstance(target, ast.Name) else None
        if made is not None:  # x = np.zeros(...), x = a.copy()
            self.env[target.id] = made[1]
            return made[0]
        decl = self.array_decl(value, target) if isinstance(target, ast.Name) else None
        if decl is not None:
            self.env[target.id] = decl[1]
            return [decl[0]]
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            if len(target.elts) != len(value.elts):
                raise self.error(target, f"cannot unpack {len(value.elts)} values into {len(target.elts)} names",
                                 KernelCompileError)
            out: list[N.Stmt] = []
            staged = []
            for t, v in zip(target.elts, value.elts):  # every right-hand value first, as Python does
                d = self.array_decl(v, t) if isinstance(t, ast.Name) else None
                if d is not None:
                    out.append(d[0])
                    staged.append((t, None, d[1]))
                    continue
                e = self.expr(v)
                name = self.tmp()
                out.append(N.Assign(name, e, line=line))
                staged.append((t, name, e.type))
            for t, name, tt in staged:
                if name is None:
                    self.env[t.id] = tt
                else:
                    out.extend(self.assign_value(t, N.Var(name, type=tt, line=line), line))
            return out
        return self.assign_value(target, self.expr(value), line)

    def assign_value(self, target: ast.AST, value: N.Expr, line: int) -> list[N.Stmt]:
        if isinstance(target, ast.Name):
            self.env[target.id] = value.type
            self.seen_types[target.id] = value.type
            if isinstance(value, N.Const) and isinstance(value.value, (bool, int)) and self.at_top \
                    and self.stores(target.id) == 1:
                # assigned once, an integer known now (nargs = len(args)): read as that constant, so a branch on
                # it is decided at compile time, as numba prunes it
                self.constants[target.id] = value
            return [N.Assign(target.id, value, line=line)]
        if isinstance(target, ast.Tuple):
            t = value.type
            if not isinstance(t, Tuple):
                raise self.error(target, f"cannot unpack a {t} into {len(target.elts)} names", KernelCompileError)
            if len(t.items) != len(target.elts):
                raise self.error(target, f"cannot unpack {len(t.items)} values into {len(target.elts)} names",
                                 KernelCompileError)
            out: list[N.Stmt] = []
            if not isinstance(value, N.Var):
                name = self.tmp()
                out.append(N.Assign(name, value, line=line))
                value = N.Var(name, type=t, line=line)
            for k, tgt in enumerate(target.elts):
                out.extend(self.assign_value(tgt, N.TupleItem(value, k, type=t.items[k], line=line), line))
            return out
        if isinstance(target, ast.Subscript):
            base = self.expr(target.value)
            if isinstance(base.type, RecordRef):  # r['a'] = v, r[0] = v
                key = self.record_key(target)
                if key is None:
                    raise self.error(target, "a record is indexed by a field name or a constant position",
                                     KernelCompileError)
                return self.field_store(base, target, key, value, line)
            if is_record_array(base.type) and isinstance(self.record_key(target), str):
                raise self.error(target, "a whole field of an array of records cannot be assigned in a kernel: "
                                         "assign its elements")
            if isinstance(base.type, Array) and self.is_view_index(target, base.type):
                return self.slice_store(self.array_view(base, target), value, target, line)
            return self.store(target, value, line, array=base)
        if isinstance(target, ast.Attribute):
            base = self.expr(target.value)
            if isinstance(base.type, RecordRef):  # r.a = v
                return self.field_store(base, target, target.attr, value, line)
            raise self.error(target, f"the attribute .{target.attr} of a {base.type} cannot be assigned in a kernel")
        raise self.error(target, "this assignment target is not supported in a kernel")

    def store(self, target: ast.Subscript, value: N.Expr, line: int, index: list[N.Expr] | None = None,
              array: N.Expr | None = None) -> list[N.Stmt]:
        if array is None:
            array = self.expr(target.value)
        if not isinstance(array.type, Array):
            raise self.error(target, f"{ast.unparse(target.value)} is not an array: only array elements can be "
                                     "assigned")
        if array.type.space == "const":
            raise self.error(target, f"{ast.unparse(target.value)} is a constant array: it cannot be written")
        if index is None:
            index = self.index(target, array)
        if isinstance(index, N.Trap):
            return [N.ExprStmt(index, line=line)]
        if is_record_array(array.type):  # ary[i] = rec: the whole record copied
            return self.record_store(array, index, value, target, line)
        array, index = self.element_of(array, index)
        value = self.unwrap(value)
        if not isinstance(value.type, (Scalar, CharSeq)):
            raise self.error(target, f"cannot store a {value.type} into an element of a {array.type.dtype} array")
        return [N.Store(array, index, self.cast(value, array.type.dtype), line=line)]

    def augassign(self, s: ast.AugAssign) -> list[N.Stmt]:
        line = s.lineno
        op = self.BINOP_NAMES[type(s.op)]
        if isinstance(s.target, ast.Name):
            name = s.target.id
            cur = self.name_value(s.target)
            if isinstance(cur.type, Array):
                raise self.error(s, "augmented assignment to an array variable")
            new = self.binary(op, cur, self.expr(s.value), s)
            self.env[name] = new.type
            return [N.Assign(name, new, line=line)]
        if isinstance(s.target, ast.Subscript):
            out: list[N.Stmt] = []
            array = self.expr(s.target.value)
            if not isinstance(array.type, Array):
                raise self.error(s, f"{ast.unparse(s.target.value)} is not an array")
            index = self.index(s.target, array)
            if isinstance(index, N.Trap):
                return [N.ExprStmt(index, line=line)]
            stable = [self.once(e, out, line) for e in index]  # evaluated once, for the load and the store
            if is_record_array(array.type):
                raise self.error(s, "augmented assignment to a whole record")
            at, at_index = self.element_of(array, stable)
            old = N.Load(at, at_index, type=array.type.dtype, line=line)
            new = self.binary(op, old, self.expr(s.value), s)
            return out + self.store(s.target, new, line, index=stable, array=array)
        if isinstance(s.target, ast.Attribute):  # r.a += v
            out = []
            base = self.once(self.expr(s.target.value), out, line)
            if isinstance(base.type, RecordRef):
                new = self.binary(op, self.record_field(base, s.target, s.target.attr), self.expr(s.value), s)
                return out + self.field_store(base, s.target, s.target.attr, new, line)
        raise self.error(s, "this assignment target is not supported in a kernel")

    # control flow ---------------------------------------------------------------------------------------
    def if_stmt(self, s: ast.If) -> list[N.Stmt]:
        cond = self.decided(self.truth(self.expr(s.test), s.test))
        if isinstance(cond, N.Const):  # a compile-time condition: only the branch taken is compiled
            if self.checks_instance(s.test):  # numba-cuda types the other one first (instance_checks)
                return self.instance_branch(s, bool(cond.value))
            return self.block(s.body if cond.value else s.orelse)
        env0, merged0 = dict(self.env), set(self.merged)
        body = self.block(s.body)
        env1, live1, merged1 = self.env, self.live, self.merged
        self.env, self.live, self.merged = dict(env0), True, set(merged0)
        orelse = self.block(s.orelse)
        env2, live2, merged2 = self.env, self.live, self.merged
        paths = ([(env1, body)] if live1 else []) + ([(env2, orelse)] if live2 else [])
        self.live = live1 or live2
        self.env = self.merge(paths, s.lineno) if paths else env0
        self.merged = (merged1 | merged2 | stored_names(s) if live1 and live2 else merged1 if live1 else merged2)
        return [N.If(cond, body, orelse, line=s.lineno)]

    def decided(self, cond: N.Expr) -> N.Expr:
        """``cond`` as a constant where it compares integers known now (a literal, a local assigned once at the
        top level from one: ``nargs = len(args); if nargs == 2``), as numba prunes such a branch; else itself."""
        def value(e: N.Expr):
            if isinstance(e, N.Const):
                return e.value
            if isinstance(e, N.Var) and e.name in self.constants and self.constants[e.name].type == e.type:
                return self.constants[e.name].value
            if isinstance(e, N.Compare) and e.left.type.kind in "biu":
                a, b = value(e.left), value(e.right)
                if a is None or b is None:
                    return None
                return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "eq": a == b, "ne": a != b}[e.op]
            if isinstance(e, N.Unary) and e.op == "not":
                v = value(e.operand)
                return None if v is None else not v
            return None

        v = value(cond)
        return N.Const(bool(v), type=BOOL, line=cond.line) if isinstance(v, (bool, int)) else cond

    def loop_body(self, header: dict[str, Type], lower_head, stmts: list[ast.stmt], line: int):
        """Lower a loop body until the types at its head are stable; returns (head, body, header env, ctx)."""
        merged = self.merged | {n for st in stmts for n in stored_names(st)}  # the loop's head joins them
        for _ in range(MAX_LOOP_ROUNDS):
            self.env, self.live, self.merged = dict(header), True, set(merged)
            head = lower_head()
            ctx = LoopContext()
            self.loops.append(ctx)
            try:
                body = self.block(stmts)
            finally:
                self.loops.pop()
            ends = ([dict(self.env)] if self.live else []) + ctx.continue_envs + ctx.break_envs
            new = dict(header)
            for env in ends:
                for name, t in env.items():
                    new[name] = self.join_type(new[name], t, line) if name in new else t
            if new == header:
                self.merged = merged
                return head, body, header, ctx
            header = new
        raise self.error(line, "the types of this loop's variables do not settle (gpusim cannot type it)")

    def close_loop(self, body: list[N.Stmt], header: dict[str, Type], ctx: LoopContext, line: int) -> None:
        """Casts at the end of the body and before each break/continue, to the head's types."""
        ends = [(self.env, body)] if self.live else []
        self.fix_jumps(body, header, line)
        for env, stmts in ends:
            stmts.extend(self.casts(env, header, line))

    def fix_jumps(self, stmts: list[N.Stmt], header: dict[str, Type], line: int) -> None:
        """Before every break/continue of this loop (not of inner loops), cast locals to the head's types."""
        for k in range(len(stmts) - 1, -1, -1):
            s = stmts[k]
            if isinstance(s, (N.Break, N.Continue)) and hasattr(s, "env"):
                stmts[k:k] = self.casts(s.env, header, s.line)
                del s.env
            elif isinstance(s, N.If):
                self.fix_jumps(s.body, header, line)
                self.fix_jumps(s.orelse, header, line)

    def for_stmt(self, s: ast.For) -> list[N.Stmt]:
        it = s.iter
        is_range = isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
            and it.func.id not in self.locals and "range" not in self.globals
        if is_range:
            if not isinstance(s.target, ast.Name):
                raise self.error(s, "a range loop variable must be a plain name")
            return self.range_loop(s)
        values = self.iterable_tuple(it) if isinstance(s.target, ast.Name) else None
        if values is not None:
            return self.tuple_loop(s, values)
        return self.iter_loop(s)  # arrays, enumerate, zip, unpacked targets (iteration.py)

    def range_loop(self, s: ast.For) -> list[N.Stmt]:
        call = s.iter
        if call.keywords or not 1 <= len(call.args) <= 3:
            raise self.error(s, "range() takes 1 to 3 positional arguments", KernelCompileError)
        pre: list[N.Stmt] = []
        args = [self.expr(a) for a in call.args]
        for a, node in zip(args, call.args):
            if not (isinstance(a.type, Scalar) and (a.type.is_int or a.type.is_bool)):
                raise self.error(node, f"range() needs integers, not {a.type} (gpusim rejects what the GPU would "
                                       f"silently truncate: write {ast.unparse(node)} as an integer, e.g. with //)")
        sig = ty.builtin("range", tuple(a.type for a in args))
        vt = sig.args[0]
        args = [self.cast(a, vt) for a in args]
        if len(args) == 1:
            start, stop, step = N.Const(0, type=vt, line=s.lineno), args[0], N.Const(1, type=vt, line=s.lineno)
        elif len(args) == 2:
            start, stop, step = args[0], args[1], N.Const(1, type=vt, line=s.lineno)
        else:
            start, stop, step = args
        # bounds are evaluated once, before the loop
        bounds = []
        for e in (start, stop, step):
            if isinstance(e, (N.Const, N.Var)) and not (isinstance(e, N.Var) and e.name in self.assigned_in(s)):
                bounds.append(e)
            else:
                name = self.tmp()
                pre.append(N.Assign(name, e, line=s.lineno))
                bounds.append(N.Var(name, type=e.type, line=s.lineno))
        var = s.target.id
        trip = None
        if all(isinstance(b, N.Const) for b in bounds) and bounds[2].value != 0:
            trip = len(range(bounds[0].value, bounds[1].value, bounds[2].value))
        env0 = dict(self.env)
        header = dict(env0)
        header[var] = vt
        _, body, header, ctx = self.loop_body(header, lambda: None, s.body, s.lineno)
        self.close_loop(body, header, ctx, s.lineno)
        pre.extend(self.entry_casts(env0, header, s.lineno))
        loop = N.ForRange(var, bounds[0], bounds[1], bounds[2], body, trip, line=s.lineno)
        self.env, self.live = header, True
        return pre + [loop]

    def assigned_in(self, s: ast.AST) -> set[str]:
        return set(stored_names(s))

    def entry_casts(self, env0: dict[str, Type], header: dict[str, Type], line: int) -> list[N.Stmt]:
        return self.casts(env0, header, line)

    def tuple_loop(self, s: ast.For, values: N.Expr) -> list[N.Stmt]:
        """``for d in (16, 8, 4)``: a counted loop over the positions, ``d`` taking each item."""
        t = values.type
        item = t.uniform
        if item is None:
            raise self.error(s, "a loop over a tuple needs items of one type (numba-cuda needs literal_unroll for "
                                "others)")
        n = len(t.items)
        pre: list[N.Stmt] = []
        if not isinstance(values, (N.Var, N.MakeTuple)):
            name = self.tmp()
            pre.append(N.Assign(name, values, line=s.lineno))
            values = N.Var(name, type=t, line=s.lineno)
        pos = self.tmp()
        var = s.target.id
        env0 = dict(self.env)
        header = dict(env0)
        header[pos] = INT64

        def head():
            self.env[var] = item
            return N.Assign(var, N.TupleIndex(values, N.Var(pos, type=INT64, line=s.lineno), type=item,
                                              line=s.lineno), line=s.lineno)

        pick, body, header, ctx = self.loop_body(header, head, s.body, s.lineno)
        self.close_loop(body, header, ctx, s.lineno)
        pre.extend(self.entry_casts(env0, header, s.lineno))
        one = N.Const(1, type=INT64, line=s.lineno)
        loop = N.ForRange(pos, N.Const(0, type=INT64, line=s.lineno), N.Const(n, type=INT64, line=s.lineno), one,
                          [pick] + body, n, line=s.lineno)
        self.env, self.live = header, True
        return pre + [loop]

    def while_stmt(self, s: ast.While) -> list[N.Stmt]:
        env0 = dict(self.env)
        holder: list[N.Expr] = []

        def head():
            holder[:] = [self.truth(self.expr(s.test), s.test)]
            return None

        _, body, header, ctx = self.loop_body(dict(env0), head, s.body, s.lineno)
        self.close_loop(body, header, ctx, s.lineno)
        cond = holder[0]
        pre = self.entry_casts(env0, header, s.lineno)
        self.env = header
        forever = isinstance(cond, N.Const) and cond.value
        self.live = not forever or bool(ctx.break_envs)
        if isinstance(cond, N.Const) and not cond.value:
            return pre
        return pre + [N.While(cond, body, line=s.lineno)]
