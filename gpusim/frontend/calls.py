"""Lowering calls: device functions, the ``numba.cuda`` intrinsics, ``math``, the builtins and type casts.

Every call's arguments are bound to the callee's parameters the way Python binds them (``CALL_SIGNATURES``:
numba-cuda's parameter names, keywords where numba-cuda takes them), so a missing or extra argument is a
compile error with the call's line, never an index error later.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import numpy as np

from ..device import FULL_MASK
from ..faults import KernelCompileError, KernelTypeError
from ..ir import nodes as N
from ..ir.types import BOOL, INT32, INT64, UINT32, Array, Record, Scalar, Tuple, record, scalar
from ..ir.walk import walk_exprs
from . import typing as ty
from .constants import dtype_from_string
from .libdevice import libdevice_call
from .names import (
    MATH_CONSTS,
    BuiltinRef,
    CmathRef,
    ConstArrayRef,
    CudaRef,
    DeviceFnRef,
    DTypeRef,
    MathRef,
    OperatorRef,
    OtherRef,
)
from .numeric_calls import FP16_ARITY
from .tree_nodes import all_nodes, stored_names
from .ufuncs import UFUNCS
from .vectors import VECTOR_TYPES


def _signature(spec: str) -> inspect.Signature:
    params = []
    for part in [p.strip() for p in spec.split(",") if p.strip()]:
        name, _, default = part.partition("=")
        params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=inspect.Parameter.empty if not default else eval(default)))  # noqa: S307
    return inspect.Signature(params)


_ATOMICS = {"add": "add", "sub": "sub", "max": "max", "min": "min", "nanmax": "nanmax", "nanmin": "nanmin",
            "exch": "exch", "inc": "inc", "dec": "dec", "and_": "and", "or_": "or", "xor": "xor"}
_SHUFFLES = {"shfl_sync": ("idx", "src_lane"), "shfl_up_sync": ("up", "delta"),
             "shfl_down_sync": ("down", "delta"), "shfl_xor_sync": ("xor", "lane_mask")}
_VOTES = {"ballot_sync": "ballot", "any_sync": "any", "all_sync": "all", "eq_sync": "eq"}

#: (parameters, keywords allowed) of every cuda.* function gpusim runs, as numba-cuda declares them
CALL_SIGNATURES: dict[str, tuple[inspect.Signature, bool]] = {
    "grid": (_signature("ndim"), True), "gridsize": (_signature("ndim"), True),
    "syncthreads": (_signature(""), False), "syncwarp": (_signature(f"mask={FULL_MASK}"), True),
    **{f"syncthreads_{k}": (_signature("predicate"), True) for k in ("count", "and", "or")},
    **{f"threadfence{s}": (_signature(""), False) for s in ("", "_block", "_system")},
    **{k: (_signature(f"mask, value, {arg}"), True) for k, (_, arg) in _SHUFFLES.items()},
    **{k: (_signature("mask, predicate"), True) for k in _VOTES},
    "match_any_sync": (_signature("mask, value"), True), "match_all_sync": (_signature("mask, value"), True),
    "activemask": (_signature(""), False), "lanemask_lt": (_signature(""), False),
    **{k: (_signature("x"), True) for k in ("popc", "brev", "clz", "ffs", "cbrt")},
    "fma": (_signature("a, b, c"), True), "selp": (_signature("test, a, b"), False),
    "shared.array": (_signature("shape, dtype, alignment=None"), True),
    "local.array": (_signature("shape, dtype, alignment=None"), True),
    "const.array_like": (_signature("ndarray"), True),
    **{f"atomic.{k}": (_signature("ary, idx, val"), False) for k in _ATOMICS},
    "atomic.cas": (_signature("ary, idx, old, val"), False),
    "atomic.compare_and_swap": (_signature("ary, old, val"), False),
}
CALL_SIGNATURES.update({f"fp16.{k}": (_signature(", ".join("abc"[:n])), False) for k, n in FP16_ARITY.items()})
_BUILTIN_ARITY = {"complex": (1, 2), "pow": (2, 2), "abs": (1, 1), "int": (1, 1), "float": (1, 1), "bool": (1, 1),
                  "len": (1, 1), "round": (1, 2), "divmod": (2, 2), "min": (2, None), "max": (2, None)}


def _single_literal(tree: ast.FunctionDef, name: str) -> Any:
    """The integer (or tuple of integers) a local is assigned, where it is assigned exactly once, by a plain
    ``name = literal`` statement, and is not a parameter; else None."""
    if name in {a.arg for a in tree.args.args}:
        return None
    stores = [n for n in all_nodes(tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
    if len(stores) != 1:
        return None
    for n in all_nodes(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and n.targets[0] is stores[0]:
            v = n.value
            if isinstance(v, ast.Constant) and isinstance(v.value, int) and not isinstance(v.value, bool):
                return v.value
            if isinstance(v, ast.Tuple) and v.elts and all(isinstance(e, ast.Constant) and isinstance(e.value, int)
                                                           and not isinstance(e.value, bool) for e in v.elts):
                return tuple(e.value for e in v.elts)
    return None


def _needs_constant(tree: ast.FunctionDef) -> set[str]:
    """The parameters of a device function whose value must be a compile-time constant: named in the shape of
    a ``cuda.shared.array``/``cuda.local.array`` (``shape=(n, m)`` too), passed on, as a whole argument, to
    another call (whose callee may need it so), or the whole condition of an ``if`` (numba prunes the branch a
    literal condition rules out before it types the function: the other branch may not type)."""
    params = {a.arg for a in tree.args.args}
    found: set[str] = set()
    for node in all_nodes(tree):
        if isinstance(node, (ast.If, ast.IfExp)):  # numba prunes the branch a literal condition never takes
            test = node.test.operand if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not) \
                else node.test
            if isinstance(test, ast.Name) and test.id in params:
                found.add(test.id)
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        is_decl = isinstance(f, ast.Attribute) and f.attr == "array" and isinstance(f.value, ast.Attribute) \
            and f.value.attr in ("shared", "local")
        if is_decl:
            shape = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "shape"), None)
            names = [shape] + (list(shape.elts) if isinstance(shape, ast.Tuple) else [])
        else:
            names = list(node.args) + [k.value for k in node.keywords]
        found.update(n.id for n in names if isinstance(n, ast.Name) and n.id in params)
    return found


class CallLowering:
    # -- binding --------------------------------------------------------------------------------------------
    def bind(self, name: str, node: ast.Call) -> dict[str, ast.AST]:
        """Bind ``node``'s arguments to ``cuda.<name>``'s parameters, or raise a compile error."""
        sig, keywords = CALL_SIGNATURES[name]
        if node.keywords and not keywords:
            raise self.error(node, f"cuda.{name}() takes no keyword arguments (numba-cuda passes them by position)",
                             KernelCompileError)
        if any(k.arg is None for k in node.keywords):
            raise self.error(node, "**-unpacking cannot be used in a kernel")
        try:
            bound = sig.bind(*node.args, **{k.arg: k.value for k in node.keywords})
        except TypeError as e:
            raise self.error(node, f"cuda.{name}{sig}: {e}", KernelCompileError) from None
        return dict(bound.arguments)

    def value_arg(self, args: dict[str, Any], name: str, default: Any = None) -> N.Expr:
        v = args.get(name, default)
        if isinstance(v, ast.AST):
            return self.expr(v)
        return self.const(v, ast.Constant(v, lineno=self.line))

    def mask(self, e: N.Expr, node: ast.AST) -> N.Expr:
        if not (isinstance(e.type, Scalar) and e.type.is_int):
            raise self.error(node, f"a warp mask must be an integer, not {e.type} (numba: Mask type must be an "
                                   "integer)", KernelTypeError)
        return self.cast(e, UINT32)

    # -- entry points ------------------------------------------------------------------------------------------
    def call_stmt(self, node: ast.Call) -> list[N.Stmt]:
        """A call whose value is not used: barriers, fences, prints, atomics, device functions."""
        line = node.lineno
        ref = self.resolve(node.func)
        if isinstance(ref, BuiltinRef) and ref.name == "print":
            return [self.print_stmt(node)]
        if isinstance(ref, CudaRef):
            path = ref.path
            if path == "syncthreads":
                self.bind(path, node)
                return [N.Barrier(line=line)]
            if path == "syncwarp":
                args = self.bind(path, node)
                return [N.SyncWarp(self.mask(self.value_arg(args, "mask", FULL_MASK), node), line=line)]
            if path.startswith("threadfence") and path in CALL_SIGNATURES:
                self.bind(path, node)
                return [N.Fence({"threadfence": "device", "threadfence_block": "block",
                                 "threadfence_system": "system"}[path], line=line)]
        if isinstance(ref, OtherRef) and ref.module == "numpy" and ref.attr in UFUNCS:
            done = self.ufunc_call(ref.attr, node)
            return done if isinstance(done, list) else [N.ExprStmt(done, line=line)]
        if ref is None and (synced := self.group_sync(node)) is not None:
            return synced
        if isinstance(ref, CudaRef) and ref.path in ("shared.array", "local.array"):
            # declared and never used: numba-cuda compiles it (and checks it) all the same
            made = self.array_decl(node, ast.Name(self.tmp(), ast.Store(), lineno=line, col_offset=node.col_offset))
            return [made[0]]
        e = self.call(node, used=False)
        return [] if e is None else [N.ExprStmt(e, line=line)]

    def call(self, node: ast.Call, used: bool) -> N.Expr | None:
        ref = self.resolve(node.func)
        if ref is None and isinstance(node.func, ast.Attribute) and node.func.attr in ("bit_count", "conjugate") \
                and not node.args and not node.keywords:
            return self.bit_count(node) if node.func.attr == "bit_count" else self.conjugate(node)
        if ref is None and isinstance(node.func, ast.Attribute) and node.func.attr in ("reshape", "view"):
            return self.reshape(node) if node.func.attr == "reshape" else self.reinterpret(node)
        if ref is None:
            raise self.error(node, f"{ast.unparse(node.func)}() is not a device function or supported intrinsic")
        if isinstance(ref, DeviceFnRef):
            return self.device_call(ref, node)
        if isinstance(ref, CudaRef):
            return self.cuda_call(ref.path, node, used)
        if isinstance(ref, MathRef):
            return self.math_call(ref.name, node)
        if isinstance(ref, DTypeRef):
            return self.type_cast(ref.dtype, node)
        if isinstance(ref, BuiltinRef):
            return self.builtin_call(ref.name, node)
        if isinstance(ref, OperatorRef):
            return self.operator_call(ref.name, node)
        if isinstance(ref, CmathRef):
            return self.cmath_call(ref.name, node)
        if isinstance(ref, OtherRef) and ref.module == "numpy" and ref.attr in UFUNCS:
            done = self.ufunc_call(ref.attr, node)
            if isinstance(done, list):
                raise self.error(node, f"np.{ref.attr}() with an output array returns nothing in a kernel: call it "
                                       "as a statement")
            return done
        raise self.error(node, f"{ast.unparse(node.func)}() is not supported in a kernel")

    # -- device functions -----------------------------------------------------------------------------------
    def device_call(self, ref: DeviceFnRef, node: ast.Call) -> N.Expr | None:
        func = ref.func
        if ref.plain and not self.builder.simulator:
            raise self.error(node, f"{func.__name__}() is a plain Python function: numba-cuda cannot call it from "
                                   f"a kernel (\"Untyped global name {func.__name__!r}\"); decorate it with "
                                   "@cuda.jit(device=True)")
        if ref.plain:
            self.builder.plain_functions.add(func)
        try:
            signature = inspect.signature(func)
            params = list(signature.parameters)
            bound = signature.bind(*self.spread(node), **{k.arg: k.value for k in node.keywords})
        except (TypeError, ValueError) as e:
            raise self.error(node, f"{func.__name__}() takes {func.__code__.co_argcount} arguments: {e}",
                             KernelCompileError) from None
        for p, param in signature.parameters.items():
            if p in bound.arguments:
                if param.kind == param.VAR_POSITIONAL:  # *args: one tuple of the extra arguments
                    bound.arguments[p] = ast.Tuple(list(bound.arguments[p]), ast.Load(), lineno=node.lineno,
                                                   col_offset=node.col_offset)
            elif param.kind == param.VAR_POSITIONAL:
                bound.arguments[p] = ast.Tuple([], ast.Load(), lineno=node.lineno, col_offset=node.col_offset)
            elif param.default is not param.empty:  # a default value: a literal where the function is defined
                bound.arguments[p] = ast.Constant(param.default, lineno=node.lineno, col_offset=node.col_offset)
        if len(bound.arguments) != len(params):
            raise self.error(node, f"{func.__name__}() takes {len(params)} arguments, {len(bound.arguments)} given",
                             KernelCompileError)
        tree = self.builder.source(func).tree
        reassigned = stored_names(tree)
        constant = _needs_constant(tree) - reassigned
        args, statics = [], []
        for p in params:
            arg = bound.arguments[p]
            fixed = self.static_arg(arg, literal=p in constant)
            if fixed is not None:
                statics.append((p, fixed))
            else:
                args.append(self.expr(arg))
        callee = self.builder.callee(func, tuple(a.type for a in args), node, self, tuple(statics))
        return N.Call(callee.name, args, type=callee.return_type, line=node.lineno)

    def spread(self, node: ast.Call) -> list[ast.AST]:
        """A call's positional arguments, ``*t`` of a tuple spread into one argument per item (``t[0]``, ...)."""
        out: list[ast.AST] = []
        for a in node.args:
            if not isinstance(a, ast.Starred):
                out.append(a)
                continue
            t = self.expr(a.value)
            if not isinstance(t.type, Tuple):
                raise self.error(a, f"*-unpacking of a {t.type}: only a tuple spreads into arguments in a kernel")
            if isinstance(a.value, ast.Tuple):
                out.extend(a.value.elts)
                continue
            out.extend(ast.Subscript(a.value, ast.Constant(k, lineno=a.lineno, col_offset=a.col_offset), ast.Load(),
                                     lineno=a.lineno, col_offset=a.col_offset) for k in range(len(t.type.items)))
        return out

    def static_arg(self, node: ast.AST, literal: bool) -> Any:
        """What a device function's argument is at compile time, where numba specialises the callee on it: a
        function, intrinsic or dtype passed as a value (numba types it as a ``Function``/``NumberClass`` of that
        one object), or, where ``literal``, an integer or bool literal or a tuple of integer literals (numba's
        ``IntegerLiteral``, ``BooleanLiteral``, a tuple of them: what ``cuda.shared.array`` needs as a shape).
        None for a runtime value.

        numba specialises on every literal; gpusim does only for the parameters whose value must be known at
        compile time (``_needs_constant``): elsewhere a literal and a runtime int64 behave the same, and one
        specialisation serves every call."""
        if isinstance(node, ast.Constant):
            v = node.value
            return v if isinstance(v, (bool, int)) and literal else None
        if isinstance(node, ast.Tuple):
            items = [self.static_arg(e, literal) for e in node.elts]
            if items and all(isinstance(v, int) and not isinstance(v, bool) for v in items):
                return tuple(items)
            return None
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return None
        ref = self.resolve(node)
        if ref is None:
            return None
        if isinstance(ref, (DeviceFnRef, DTypeRef, BuiltinRef, OperatorRef)) or (
                isinstance(ref, CudaRef) and ref.path in CALL_SIGNATURES) or (
                isinstance(ref, MathRef) and ref.name not in MATH_CONSTS):
            return ref
        if not literal:
            return None
        if isinstance(ref, (bool, int)) and not isinstance(ref, np.generic):
            return ref
        if isinstance(ref, tuple) and ref and all(isinstance(v, int) and not isinstance(v, bool) for v in ref):
            return ref
        return None

    # -- cuda ---------------------------------------------------------------------------------------------------
    def cuda_call(self, path: str, node: ast.Call, used: bool) -> N.Expr | None:
        line = node.lineno
        if path.startswith("libdevice."):
            return libdevice_call(self, path[len("libdevice."):], node)
        if path == "cg.this_grid":
            return self.this_grid(node)
        if path in VECTOR_TYPES:
            return self.vector_make(path, node)
        if path not in CALL_SIGNATURES:
            raise self.error(node, f"cuda.{path} is not supported by gpusim")
        if path in _SHUFFLES and (len(node.args) > 3 or any(k.arg == "width" for k in node.keywords)):
            raise self.error(node, f"numba-cuda's cuda.{path}(mask, value, {_SHUFFLES[path][1]}) has no width "
                                   "argument (a kernel using one does not compile for the GPU)")
        args = self.bind(path, node)
        if path in ("grid", "gridsize"):
            return self.grid(path, args, node)
        if path in ("syncthreads", "syncwarp") or path.startswith("threadfence"):
            raise self.error(node, f"cuda.{path}() returns nothing: it cannot be used as a value")
        if path.startswith("syncthreads_"):
            pred = self.value_arg(args, "predicate")
            if not (isinstance(pred.type, Scalar) and pred.type.is_int):
                raise self.error(node, f"cuda.{path} needs an integer predicate, not {pred.type}: numba-cuda rejects "
                                       f"a bool (write cuda.{path}(int(...)))")
            return N.BarrierReduce(path[len("syncthreads_"):], self.cast(pred, INT32), type=INT32, line=line)
        if path in _SHUFFLES:
            kind, lane_name = _SHUFFLES[path]
            mask = self.mask(self.value_arg(args, "mask"), node)
            value = self.value_arg(args, "value")
            if value.type not in ty.WARP_VALUE_TYPES:
                raise self.error(node, f"cuda.{path}: shfl_sync only supports 32- and 64-bit ints and floats, not "
                                       f"{value.type} (numba-cuda rejects it)")
            lane = self.value_arg(args, lane_name)
            if not (isinstance(lane.type, Scalar) and lane.type.is_int):
                raise self.error(node, f"cuda.{path}: the {lane_name} must be an integer, not {lane.type}")
            return N.Shuffle(kind, mask, value, self.cast(lane, INT32), type=value.type, line=line)
        if path in _VOTES:
            mask = self.mask(self.value_arg(args, "mask"), node)
            pred = self.value_arg(args, "predicate")
            if not (isinstance(pred.type, Scalar) and (pred.type.is_int or pred.type.is_bool)):
                raise self.error(node, f"cuda.{path}: the predicate must be an integer or a bool, not {pred.type} "
                                       "(numba: Predicate must be an integer or boolean)", KernelTypeError)
            kind = _VOTES[path]
            return N.Vote(kind, mask, self.cast(pred, BOOL), type=INT32 if kind == "ballot" else BOOL, line=line)
        if path in ("match_any_sync", "match_all_sync"):
            mask = self.mask(self.value_arg(args, "mask"), node)
            value = self.value_arg(args, "value")
            if value.type not in ty.WARP_VALUE_TYPES:
                raise self.error(node, f"cuda.{path} only supports 32- and 64-bit ints and floats, not {value.type}")
            kind = path[len("match_"):-len("_sync")]
            t = INT32 if kind == "any" else Tuple((INT32, BOOL))
            return N.Match(kind, mask, value, type=t, line=line)
        if path.startswith("fp16."):
            return self.fp16_call(path[len("fp16."):], [self.value_arg(args, k) for k in "abc" if k in args], node)
        if path == "activemask":
            return N.ActiveMask(type=UINT32, line=line)
        if path == "lanemask_lt":
            return N.Special("lanemask_lt", type=UINT32, line=line)
        if path in ("popc", "brev", "clz", "ffs", "cbrt"):
            x = self.value_arg(args, "x")
            sig = ty.cuda_call(path, (x.type,))
            if sig is None:
                raise self.error(node, f"numba-cuda has no cuda.{path} for {x.type}", KernelCompileError)
            name = "math.cbrt" if path == "cbrt" else path
            return N.Intrinsic(name, [self.cast(x, sig.args[0])], type=sig.ret, line=line)
        if path == "fma":
            a, b, c = (self.value_arg(args, k) for k in "abc")
            sig = ty.cuda_call("fma", (a.type, b.type, c.type))
            if sig is None:
                raise self.error(node, f"numba-cuda has no cuda.fma for {a.type}, {b.type}, {c.type}",
                                 KernelCompileError)
            return N.Fma(*(self.cast(x, sig.ret) for x in (a, b, c)), type=sig.ret, line=line)
        if path == "selp":
            test, a, b = (self.value_arg(args, k) for k in ("test", "a", "b"))
            if a.type != b.type or a.type not in ty.SELP_TYPES:
                raise self.error(node, f"cuda.selp needs two values of one type among int16/32/64, uint16/32/64, "
                                       f"float32/64; got {a.type} and {b.type}", KernelCompileError)
            return N.Intrinsic("selp", [self.truth(test, node), a, b], type=a.type, line=line)
        if path.startswith("atomic."):
            return self.atomic(path, args, node, used)
        raise self.error(node, f"assign cuda.{path}(...) to a variable before using it")

    def grid(self, path: str, args: dict, node: ast.Call) -> N.Expr:
        nd = self.value_arg(args, "ndim")
        if not isinstance(nd, N.Const) or nd.value not in (1, 2, 3) or isinstance(nd.value, bool):
            raise self.error(node, f"cuda.{path} takes 1, 2 or 3 (a constant)")
        line = node.lineno
        comps = []
        for axis in "xyz"[:nd.value]:
            def sp(name: str, axis: str = axis) -> N.Expr:
                return N.Cast(N.Special(f"{name}.{axis}", type=INT32, line=line), type=INT64, line=line)

            if path == "grid":
                e = N.Binary("add", N.Binary("mul", sp("blockIdx"), sp("blockDim"), type=INT64, line=line),
                             sp("threadIdx"), type=INT64, line=line)
            else:
                e = N.Binary("mul", sp("blockDim"), sp("gridDim"), type=INT64, line=line)
            comps.append(e)
        if len(comps) == 1:
            return comps[0]
        return N.MakeTuple(comps, type=Tuple(tuple(INT64 for _ in comps)), line=line)

    def atomic(self, path: str, args: dict, node: ast.Call, used: bool) -> N.Expr:
        line = node.lineno
        array = self.value_arg(args, "ary")
        kind = path[len("atomic."):]
        op = "cas" if kind in ("cas", "compare_and_swap") else _ATOMICS[kind]
        if not isinstance(array.type, Array):
            raise self.error(node, f"cuda.{path} needs an array as its first argument, not {array.type}")
        t: Array = array.type
        if t.space == "const":
            raise self.error(node, f"cuda.{path} cannot change a constant array")
        if t.dtype not in ty.ATOMIC_DTYPES[op]:
            allowed = ", ".join(str(d) for d in ty.ATOMIC_DTYPES[op])
            raise self.error(node, f"numba-cuda has no cuda.{path} for {t.dtype} arrays (it supports {allowed}): "
                                   "the kernel does not compile for the GPU", KernelCompileError)
        if kind == "compare_and_swap":
            if t.ndim != 1:
                raise self.error(node, "cuda.atomic.compare_and_swap needs a 1-D array")
            index = [N.Const(0, type=INT64, line=line)]
        else:
            idx = self.value_arg(args, "idx")
            index = self.atomic_index(idx, t, node)
        value = self.value_arg(args, "val")
        if not isinstance(value.type, Scalar):
            raise self.error(node, f"cuda.{path}: the value must be a number, not {value.type}")
        compare = None
        if op == "cas":
            old = self.value_arg(args, "old")
            if not isinstance(old.type, Scalar):
                raise self.error(node, f"cuda.{path}: the old value must be a number, not {old.type}")
            compare = self.cast(old, t.dtype)
        return N.Atomic(op, array, index, self.cast(value, t.dtype), compare, used, type=t.dtype, line=line)

    def atomic_index(self, idx: N.Expr, t: Array, node: ast.AST) -> list[N.Expr]:
        if isinstance(idx.type, Tuple):
            if isinstance(idx, N.MakeTuple):
                comps = list(idx.items)
            elif isinstance(idx, N.Var):
                comps = [N.TupleItem(idx, k, type=it, line=idx.line) for k, it in enumerate(idx.type.items)]
            else:
                raise self.error(node, "index an atomic with a tuple held in a variable, or with (a, b, ...)")
        else:
            comps = [idx]
        if len(comps) != t.ndim:
            raise self.error(node, f"an atomic on a {t.ndim}-D array needs {t.ndim} indices, not {len(comps)}")
        out = []
        for c in comps:
            if not (isinstance(c.type, Scalar) and (c.type.is_int or c.type.is_bool)):
                raise self.error(node, f"an atomic's index must be an integer, not {c.type}")
            out.append(self.cast(c, INT64))
        return out

    # -- array declarations ---------------------------------------------------------------------------------------
    def array_decl(self, value: ast.AST, target: ast.Name) -> tuple[N.Stmt, Array] | None:
        """``sh = cuda.shared.array(...)`` and friends: the declaration statement and the array type."""
        if not isinstance(value, ast.Call):
            return None
        ref = self.resolve(value.func)
        if not isinstance(ref, CudaRef) or ref.path not in ("shared.array", "local.array", "const.array_like"):
            return None
        line = value.lineno
        args = self.bind(ref.path, value)
        if ref.path == "const.array_like":
            src = args["ndarray"]
            g = self.resolve(src) if isinstance(src, (ast.Name, ast.Attribute)) else None
            if not isinstance(g, ConstArrayRef):
                raise self.error(value, "cuda.const.array_like needs a module-level NumPy array")
            arr = self.const_array(ConstArrayRef(g.array, g.name), value)   # copied to constant memory: frozen
            arr.name = target.id
            return N.Assign(target.id, arr, line=line), arr.type
        shape_node, dtype_node = args["shape"], args["dtype"]
        whole = self.const_value(shape_node, tuples=True) if isinstance(shape_node, (ast.Name, ast.Attribute)) \
            else None
        if isinstance(whole, tuple):  # SHAPE = (2, TPB) at module level
            parts = [ast.Constant(v, lineno=shape_node.lineno) for v in whole]
        else:
            parts = shape_node.elts if isinstance(shape_node, ast.Tuple) else [shape_node]
        shape = []
        for part in parts:
            v = self.const_value(part)
            if not isinstance(part, (ast.Constant, ast.Name, ast.Attribute)) or v is None:
                raise self.error(part, f"the shape of cuda.{ref.path} must be a literal or a module-level constant, "
                                       f"not the expression {ast.unparse(part)!r} (numba-cuda rejects it: give it a "
                                       "name at module level, e.g. TILE_LEN = TPB + 2)")
            if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)) or v < 0:
                raise self.error(part, f"the shape {ast.unparse(shape_node)} must be non-negative integers")
            shape.append(int(v))
        dtype = self.dtype_value(dtype_node)
        if dtype is None:
            raise self.error(dtype_node, f"{ast.unparse(dtype_node)} is not a dtype")
        alignment = self.alignment(args.get("alignment"))
        st = self.kernel_element(dtype, dtype_node)
        decl = self.builder.new_decl()
        if ref.path == "shared.array":
            dynamic = tuple(shape) == (0,)
            return (N.SharedDecl(target.id, target.id, tuple(shape), st, dynamic, decl, alignment, line=line),
                    Array(st, len(shape), "C", "shared"))
        return (N.LocalDecl(target.id, target.id, tuple(shape), st, decl, alignment, line=line),
                Array(st, len(shape), "C", "local"))

    def alignment(self, node: ast.AST | None) -> int | None:
        """The ``alignment=`` of an array declaration, checked as numba-cuda checks it (a constant integer, a
        positive power of two, a multiple of a pointer's 8 bytes); None where not given."""
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return None
        v = self.const_value(node)
        if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
            raise self.error(node, "alignment must be a constant integer", KernelCompileError)
        v = int(v)
        why = ("positive" if v <= 0 else "a power of 2" if v & (v - 1) else "a multiple of 8" if v % 8 else None)
        if why is not None:
            raise self.error(node, f"Alignment must be {why} (alignment={v})", KernelCompileError)
        return v

    def const_value(self, node: ast.AST, tuples: bool = False) -> Any:
        """A compile-time number: a literal, a local assigned once, from a literal (``N = 100``: numba's
        constant inference sees through it), or a name or attribute of a module constant (else None)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.locals:
            v = _single_literal(self.tree, node.id)
            return v if v is not None and (tuples or not isinstance(v, tuple)) else None
        if isinstance(node, (ast.Name, ast.Attribute)):
            ref = self.resolve(node)
            if isinstance(ref, (bool, int, float, np.integer, np.floating)) or (tuples and isinstance(ref, tuple)):
                return ref
        return None

    def dtype_value(self, node: ast.AST) -> np.dtype | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return dtype_from_string(node.value)
        ref = self.resolve(node)
        if isinstance(ref, DTypeRef):
            return ref.dtype
        if isinstance(ref, BuiltinRef) and ref.name in ("int", "float", "bool"):
            return np.dtype({"int": np.int64, "float": np.float64, "bool": np.bool_}[ref.name])
        if ref is None and isinstance(node, ast.Attribute) and node.attr == "dtype":
            base = self.expr(node.value)
            if isinstance(base.type, Array):
                return base.type.dtype.dtype
        return None

    # -- math, builtins, casts ---------------------------------------------------------------------------------
    def plain_args(self, what: str, node: ast.Call) -> list[N.Expr]:
        """The arguments' values; ``*t`` of a tuple spreads its items (``complex(*cmath.polar(z))``)."""
        if node.keywords:
            raise self.error(node, f"{what}() takes no keyword arguments in a kernel", KernelCompileError)
        out: list[N.Expr] = []
        for a in node.args:
            if not isinstance(a, ast.Starred):
                out.append(self.expr(a))
                continue
            t = self.expr(a.value)
            if not isinstance(t.type, Tuple):
                raise self.error(a, f"*-unpacking of a {t.type}: only a tuple spreads into arguments in a kernel")
            if isinstance(t, N.MakeTuple):
                out.extend(t.items)
                continue
            # each item reads the tuple again: only where that costs no memory access and has no effect
            if any(isinstance(x, (N.Load, N.Atomic, N.Call, N.Trap)) for x in walk_exprs(t)):
                raise self.error(a, "*-unpacking of a tuple read from memory or made by a call: assign it to a "
                                    "variable first")
            out.extend(N.TupleItem(t, k, type=it, line=a.lineno) for k, it in enumerate(t.type.items))
        return out

    def math_call(self, name: str, node: ast.Call) -> N.Expr:
        if name not in ty.MATH:
            raise self.error(node, f"math.{name} is not supported in a kernel")
        args = self.plain_args(f"math.{name}", node)
        want = len(ty.MATH[name][0].args)
        if len(args) != want:
            raise self.error(node, f"math.{name}() takes {want} argument{'s' if want > 1 else ''}, {len(args)} given",
                             KernelCompileError)
        sig = ty.math_call(name, tuple(a.type for a in args))
        if sig is None:
            raise self.error(node, f"numba-cuda has no math.{name} for {', '.join(str(a.type) for a in args)}",
                             KernelCompileError)
        return N.Intrinsic(f"math.{name}", [self.cast(a, t) for a, t in zip(args, sig.args)], type=sig.ret,
                           line=node.lineno)

    def type_cast(self, dtype: np.dtype, node: ast.Call) -> N.Expr:
        args = self.plain_args(str(dtype), node)
        if len(args) != 1:
            raise self.error(node, f"{ast.unparse(node.func)}() takes one value to convert, {len(args)} given",
                             KernelCompileError)
        if not isinstance(args[0].type, Scalar):
            raise self.error(node, f"cannot convert a {args[0].type} to {dtype}")
        return self.cast(args[0], self.kernel_scalar(dtype, node))

    def kernel_element(self, dtype: np.dtype, node: ast.AST) -> Scalar | Record:
        """The IR type of a shared or local array's elements: a scalar or a record (numba's record dtype)."""
        if dtype.fields is None:
            return self.kernel_scalar(dtype, node)
        try:
            return record(dtype)
        except ValueError as e:
            raise self.error(node, f"records whose {e} are not supported in a kernel") from None

    def kernel_scalar(self, dtype: np.dtype, node: ast.AST) -> Scalar:
        """The IR type of ``dtype``, or a compile error for one a kernel cannot hold (complex, datetime, ...)."""
        try:
            return scalar(dtype)
        except ValueError:
            what = "complex numbers are" if dtype.kind == "c" else f"values of dtype {dtype} are"
            raise self.error(node, f"{what} not supported by gpusim yet") from None

    def builtin_call(self, name: str, node: ast.Call) -> N.Expr:
        line = node.lineno
        if name == "range":
            raise self.error(node, "range() can only be used in a for loop")
        if name == "print":
            raise self.error(node, "print() returns nothing: it cannot be used as a value")
        if name == "isinstance":
            return self.isinstance_call(node)
        if name == "tuple":  # tuple(t) of a tuple: its items (numba-cuda takes no other iterable here)
            if len(node.args) != 1 or node.keywords:
                raise self.error(node, "tuple() in a kernel takes one tuple")
            t = self.expr(node.args[0])
            if not isinstance(t.type, Tuple):
                raise self.error(node, f"tuple() in a kernel takes a tuple, not a {t.type}")
            items = [N.TupleItem(t, k, type=it, line=line) for k, it in enumerate(t.type.items)]
            return N.MakeTuple(items, type=Tuple(t.type.items), line=line)
        lo, hi = _BUILTIN_ARITY[name]
        args = self.plain_args(name, node)
        if name in ("min", "max") and len(args) == 1:
            raise self.error(node, f"{name}() of one value (a sequence) is not supported in a kernel")
        if len(args) < lo or (hi is not None and len(args) > hi):
            want = f"{lo}" if lo == hi else f"{lo} or {hi}" if hi else f"at least {lo}"
            raise self.error(node, f"{name}() takes {want} argument{'s' if (hi or lo) > 1 else ''}, {len(args)} "
                                   "given", KernelCompileError)
        if name == "len":
            t = args[0].type
            if isinstance(t, Array):
                return N.ArrayShape(args[0], 0, type=INT64, line=line)
            if isinstance(t, Tuple):
                return N.Const(len(t.items), type=INT64, line=line)
            raise self.error(node, f"len() of a {t} is not supported in a kernel")
        for a in args:
            if not isinstance(a.type, Scalar):
                raise self.error(node, f"{name}() of a {a.type} is not supported in a kernel")
        if name == "pow":  # pow(x, y) is x ** y (numba types both by the ** operator's cases)
            return self.binary("pow", args[0], args[1], node)
        types_ = tuple(a.type for a in args)
        sig = ty.builtin(name, types_)
        if sig is None:
            raise self.error(node, f"numba-cuda has no {name}() for {', '.join(str(t) for t in types_)}",
                             KernelCompileError)
        if name in ("int", "float", "bool"):
            return self.cast(args[0], sig.ret)
        if name == "complex":
            t = sig.ret
            part = Scalar(f"float{t.bits // 2}")
            if len(args) == 1:
                return self.cast(args[0], t)
            return N.Intrinsic("make_complex", [self.cast(a, part) for a in args], type=t, line=line)
        if name == "divmod":
            t = sig.args[0]
            a, b = (self.cast(x, t) for x in args)
            lets = []
            ops = []
            for x in (a, b):
                if isinstance(x, (N.Const, N.Var)):
                    ops.append(x)
                else:
                    v = self.tmp()
                    lets.append((v, x))
                    ops.append(N.Var(v, type=t, line=line))
            e: N.Expr = N.MakeTuple([N.Binary("floordiv", ops[0], ops[1], type=t, line=line),
                                     N.Binary("mod", ops[0], ops[1], type=t, line=line)], type=sig.ret, line=line)
            for v, x in reversed(lets):
                e = N.Let(v, x, e, type=sig.ret, line=line)
            return e
        if name in ("min", "max"):
            return N.Intrinsic(name, [self.cast(a, sig.ret) for a in args], type=sig.ret, line=line)
        if name == "round":
            if len(args) == 2:
                return N.Intrinsic("round_ndigits", [self.cast(a, t) for a, t in zip(args, sig.args)], type=sig.ret,
                                   line=line)
            return N.Intrinsic("round", [self.cast(args[0], sig.args[0])], type=sig.ret, line=line)
        return N.Intrinsic(name, [self.cast(a, t) for a, t in zip(args, sig.args)], type=sig.ret, line=line)

    # -- print ---------------------------------------------------------------------------------------------------
    def print_stmt(self, node: ast.Call) -> N.Print:
        if node.keywords:
            raise self.error(node, "print() takes no keyword arguments in a kernel (numba-cuda prints its arguments "
                                   "separated by spaces)", KernelCompileError)
        items: list[N.Expr | str] = []
        for a in node.args:
            if isinstance(a, ast.Constant) and isinstance(a.value, str):
                items.append(a.value)
                continue
            e = self.expr(a)
            self.printable(e.type, a)
            items.append(e)
        return N.Print(items, line=node.lineno)

    def printable(self, t: Any, node: ast.AST) -> None:
        if isinstance(t, Tuple):
            for item in t.items:
                self.printable(item, node)
        elif not isinstance(t, Scalar) or t.is_complex:
            raise self.error(node, f"print() cannot print a {t} in a kernel (numbers, bools, strings and tuples of "
                                   "them only)")
