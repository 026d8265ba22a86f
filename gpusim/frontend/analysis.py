"""Analysis of a kernel's IR: which values vary per lane, which control flow diverges, constant shapes.

``Analysis`` runs to a fixed point over one ``FunctionIR``: a local is *varying* if any assignment gives it a
per-lane value or happens under a partial mask (inside a divergent ``if`` or loop); an ``if``/loop is
*divergent* if its condition varies or lanes leave it separately; a ``return``/``break``/``continue`` is
*masked* (taken per lane) when a divergent construct encloses it.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np

from ..faults import KernelCompileError
from ..ir.function import FunctionIR
from .names import (
    BUILTINS,
    CONSTRUCT_NAMES,
    CUDA_CALLS,
    MATH_CONSTS,
    MATH_FUNCS,
    UNIFORM_CUDA,
    VARYING_CUDA,
    ConstArrayRef,
    CudaRef,
    DeviceFnRef,
    DTypeRef,
    ModuleRef,
    _dtype_of,
)

if TYPE_CHECKING:
    from .build import FrontEnd


# ---------------------------------------------------------------------------------------------- analysis


def qualified(ir: FunctionIR, node: ast.AST) -> Any:
    """Resolve ``cuda.threadIdx.x``-like chains and global names to what they refer to (or None if local)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id in ir.locals:
        return None
    base = ir.globals.get(node.id)
    if base is None:
        return None
    parts.reverse()
    if not parts:
        return base
    if isinstance(base, ModuleRef):
        if base.kind == "cuda":
            return CudaRef(".".join(parts))
        if base.kind == "math":
            return ("math", ".".join(parts))
        if base.kind == "numba" and parts[0] == "cuda" and len(parts) > 1:  # numba.cuda.grid(1)
            return CudaRef(".".join(parts[1:]))
        if base.kind in ("numpy", "numba"):
            attr = ".".join(parts)
            mod = np if base.kind == "numpy" else __import__("numba")
            obj: Any = mod
            try:
                for p in parts:
                    obj = getattr(obj, p)
            except AttributeError:
                return (base.kind, attr)
            dt = _dtype_of(obj)
            if dt is not None:
                return DTypeRef(dt)
            return (base.kind, attr)
    if isinstance(base, CudaRef):
        return CudaRef(base.path + "." + ".".join(parts))
    return ("attr", base, parts)


class Analysis:
    """Decides which locals vary per lane and which control flow diverges (to a fixed point)."""

    def __init__(self, fe: FrontEnd, ir: FunctionIR) -> None:
        self.fe = fe
        self.ir = ir
        self.changed = False
        self.scalar_params: set[str] = set()  # kernel parameters (or aliases) that are given scalar values

    def demote_param(self, name: str) -> bool:
        """A kernel parameter assigned a non-array value holds a scalar (``n = n * 2``): not an array."""
        if self.ir.arrays.get(name) != "param":
            return False
        del self.ir.arrays[name]
        self.scalar_params.add(name)
        self.changed = True
        return True

    def run(self) -> None:
        ir = self.ir
        if ir.is_kernel and not ir.param_varying:  # compiled without arguments: assume every one is an array
            for p in ir.params:
                ir.arrays[p] = "param"
        elif ir.is_kernel:  # specialised on the launch's arguments: "param" for arrays, False for scalars
            for p, v in zip(ir.params, ir.param_varying):
                if isinstance(v, str):
                    ir.arrays[p] = v
                else:
                    self.scalar_params.add(p)
        else:
            for p, v in zip(ir.params, ir.param_varying):
                if isinstance(v, str):  # an array argument: its kind ("param", "shared", ...)
                    ir.arrays[p] = v
                elif v:
                    ir.varying.add(p)
        for _ in range(50):
            self.changed = False
            self.block(ir.tree.body, partial=False, in_div=False, loop=None)
            if not self.changed:
                break

    def mark(self, name: str) -> None:
        if name not in self.ir.varying:
            self.ir.varying.add(name)
            self.changed = True

    def set_div(self, node: ast.AST) -> None:
        if id(node) not in self.ir.divergent:
            self.ir.divergent.add(id(node))
            self.changed = True

    def set_masked(self, node: ast.AST) -> None:
        if id(node) not in self.ir.masked_exits:
            self.ir.masked_exits.add(id(node))
            self.changed = True

    # statements ------------------------------------------------------------------------------------
    def block(self, body: list[ast.stmt], partial: bool, in_div: bool, loop: ast.AST | None) -> None:
        for s in body:
            self.stmt(s, partial, in_div, loop)

    def targets(self, target: ast.AST, varying: bool, partial: bool, value: ast.AST | None) -> None:
        if isinstance(target, ast.Name):
            kind = self.array_kind(value) if value is not None else None
            if kind == "param" and target.id in self.scalar_params:
                kind = None
            if kind is None:
                self.demote_param(target.id)
            if kind is not None:
                prev = self.ir.arrays.get(target.id)
                if prev is not None and prev != kind:
                    raise self.ir.error(target, f"{target.id!r} holds arrays of different kinds")
                if partial and not isinstance(value, ast.Call):
                    raise self.ir.error(target, f"the array variable {target.id!r} is assigned inside "
                                                "divergent code: an array cannot differ between threads")
                self.ir.arrays[target.id] = kind
                return
            if varying or partial:
                self.mark(target.id)
        elif isinstance(target, ast.Tuple):
            vals = value.elts if isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts) else None
            for i, t in enumerate(target.elts):
                v = vals[i] if vals else None
                self.targets(t, self.varies(v) if v is not None else varying, partial, v)
        elif isinstance(target, ast.Subscript):
            self.expr_check(target)
        else:
            raise self.ir.error(target, "this assignment target is not supported in a kernel")

    def stmt(self, s: ast.stmt, partial: bool, in_div: bool, loop: ast.AST | None) -> None:
        ir = self.ir
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise ir.error(s, "chained assignment (a = b = c) is not supported in a kernel")
            self.expr_check(s.value)
            self.targets(s.targets[0], self.varies(s.value), partial, s.value)
        elif isinstance(s, ast.AnnAssign):
            if s.value is None:
                return
            self.expr_check(s.value)
            self.targets(s.target, self.varies(s.value), partial, s.value)
        elif isinstance(s, ast.AugAssign):
            self.expr_check(s.value)
            if isinstance(s.target, ast.Name):
                if s.target.id in ir.arrays and not self.demote_param(s.target.id):
                    raise ir.error(s, "augmented assignment to an array variable")
                if self.varies(s.value) or partial or s.target.id in ir.varying:
                    self.mark(s.target.id)
            elif isinstance(s.target, ast.Subscript):
                self.expr_check(s.target)
            else:
                raise ir.error(s, "this assignment target is not supported in a kernel")
        elif isinstance(s, ast.If):
            self.expr_check(s.test)
            div = self.varies(s.test)
            if div:
                self.set_div(s)
            self.block(s.body, partial or div, in_div or div, loop)
            self.block(s.orelse, partial or div, in_div or div, loop)
        elif isinstance(s, ast.For):
            for a in s.iter.args:
                self.expr_check(a)
            div = any(self.varies(a) for a in s.iter.args) or self.has_masked_jump(s)
            if div:
                self.set_div(s)
            if div or partial:
                self.mark(s.target.id)
            self.block(s.body, partial or div, in_div or div, s)
        elif isinstance(s, ast.While):
            self.expr_check(s.test)
            div = self.varies(s.test) or self.has_masked_jump(s)
            if div:
                self.set_div(s)
            self.block(s.body, partial or div, in_div or div, s)
        elif isinstance(s, (ast.Break, ast.Continue)):
            if loop is None:
                raise ir.error(s, f"{type(s).__name__.lower()} outside a loop")
            # taken per lane when a divergent `if` lies between it and its loop, or the loop itself diverges
            # (then lanes that already left or skipped this iteration must not be cut off with it)
            if self.div_between(loop, s) or id(loop) in ir.divergent:
                self.set_masked(s)
        elif isinstance(s, ast.Return):
            if s.value is not None:
                if ir.is_kernel:
                    raise ir.error(s, "a kernel cannot return a value (write results to an array)")
                self.expr_check(s.value)
                if self.varies(s.value) or partial:
                    if not ir.returns_varying:
                        ir.returns_varying = True
                        self.changed = True
            if in_div:
                self.set_masked(s)
                if not ir.has_masked_return:
                    ir.has_masked_return = True
                    self.changed = True
                if s.value is not None and not ir.returns_varying:
                    ir.returns_varying = True
                    self.changed = True
        elif isinstance(s, ast.Expr):
            self.expr_check(s.value)
        elif isinstance(s, ast.Pass):
            pass

    def div_between(self, loop: ast.AST, target: ast.AST) -> bool:
        """Is there a divergent If between ``loop`` and ``target`` (not crossing an inner loop)?"""

        def search(body: list[ast.stmt], div: bool) -> bool | None:
            for st in body:
                if st is target:
                    return div
                if isinstance(st, ast.If):
                    d = div or id(st) in self.ir.divergent
                    r = search(st.body, d)
                    if r is None:
                        r = search(st.orelse, d)
                    if r is not None:
                        return r
            return None

        return bool(search(loop.body, False))

    def has_masked_jump(self, loop: ast.AST) -> bool:
        def walk(body: list[ast.stmt]) -> bool:
            for st in body:
                if isinstance(st, (ast.Break, ast.Continue)) and id(st) in self.ir.masked_exits:
                    return True
                if isinstance(st, ast.If) and (walk(st.body) or walk(st.orelse)):
                    return True
            return False

        return walk(loop.body)

    # expressions -----------------------------------------------------------------------------------
    def array_kind(self, node: ast.AST | None) -> str | None:
        if node is None:
            return None
        if isinstance(node, ast.Name) and node.id in self.ir.arrays:
            return self.ir.arrays[node.id]
        if isinstance(node, ast.Name) and isinstance(self.ir.globals.get(node.id), ConstArrayRef):
            return "const"
        if isinstance(node, ast.Call):
            q = qualified(self.ir, node.func)
            if isinstance(q, CudaRef):
                if q.path == "shared.array":
                    return "shared"
                if q.path == "local.array":
                    return "local"
                if q.path == "const.array_like":
                    return "const"
        return None

    def expr_check(self, node: ast.AST) -> None:
        for sub in ast.walk(node):
            if not isinstance(sub, (ast.expr, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop,
                                    ast.boolop, ast.keyword)):
                continue
            if type(sub) in CONSTRUCT_NAMES:
                raise self.ir.error(sub, f"{CONSTRUCT_NAMES[type(sub)]} cannot be used in a kernel")
            if isinstance(sub, ast.Call):
                self.check_call(sub)

    def check_call(self, node: ast.Call) -> None:
        ir = self.ir
        q = qualified(ir, node.func)
        if isinstance(q, DeviceFnRef):
            pv = tuple(self.array_kind(a) or self.varies(a) for a in node.args)
            if node.keywords:
                raise ir.error(node, "keyword arguments to device functions are not supported")
            callee = self.fe.build(q.func, is_kernel=False, param_varying=pv)
            if len(node.args) != len(callee.params):
                raise ir.error(node, f"{callee.name}() takes {len(callee.params)} arguments, "
                                     f"{len(node.args)} given", KernelCompileError)
            if ir.callees.get(id(node)) is not callee:
                ir.callees[id(node)] = callee
                self.changed = True
            return
        if isinstance(q, CudaRef):
            if q.path not in CUDA_CALLS:
                raise ir.error(node, f"cuda.{q.path} is not supported by gpusim")
            return
        if isinstance(q, tuple) and q[0] == "math":
            if q[1] not in MATH_FUNCS:
                raise ir.error(node, f"math.{q[1]} is not supported in a kernel")
            return
        if isinstance(q, DTypeRef) or (isinstance(q, type) and q in (int, float, bool)):
            return
        if callable(q) and getattr(q, "__name__", None) in BUILTINS:
            return
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            raise ir.error(node, f"{ast.unparse(node.func)}() is not supported in a kernel")
        raise ir.error(node, f"{ast.unparse(node.func)}() is not a device function or supported intrinsic")

    def varies(self, node: ast.AST) -> bool:
        ir = self.ir
        if isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.Name):
            if node.id in ir.locals:
                return node.id in ir.varying
            return False
        if isinstance(node, ast.Attribute):
            if node.attr in ("shape", "size", "ndim", "dtype"):
                return False
            q = qualified(ir, node)
            if isinstance(q, CudaRef):
                if q.path in VARYING_CUDA:
                    return True
                if q.path in UNIFORM_CUDA:
                    return False
                raise ir.error(node, f"cuda.{q.path} is not supported by gpusim")
            if isinstance(q, tuple) and q[0] == "math":
                if q[1] in MATH_CONSTS:
                    return False
                raise ir.error(node, f"math.{q[1]} is not supported in a kernel")
            if q is None:
                raise ir.error(node, f"the attribute .{node.attr} is not supported in a kernel")
            return False
        if isinstance(node, ast.Subscript):
            base = node.value
            idx_var = self.varies(node.slice)
            if isinstance(base, ast.Tuple):
                return idx_var or self.varies(base)
            if isinstance(base, ast.Name) and base.id in ir.locals and base.id not in ir.arrays:
                return base.id in ir.varying or idx_var  # tuple variable
            kind = self.array_kind(base)
            if isinstance(base, ast.Attribute) and base.attr == "shape":
                return idx_var
            if kind in ("shared", "local") or (not ir.is_kernel and kind in (None, "param")):
                return True
            return idx_var
        if isinstance(node, ast.Tuple):
            return any(self.varies(e) for e in node.elts)
        if isinstance(node, ast.Slice):
            raise ir.error(node, "slicing arrays is not supported in a kernel")
        if isinstance(node, (ast.BinOp,)):
            return self.varies(node.left) or self.varies(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.varies(node.operand)
        if isinstance(node, ast.BoolOp):
            return any(self.varies(v) for v in node.values)
        if isinstance(node, ast.Compare):
            return self.varies(node.left) or any(self.varies(c) for c in node.comparators)
        if isinstance(node, ast.IfExp):
            return self.varies(node.test) or self.varies(node.body) or self.varies(node.orelse)
        if isinstance(node, ast.Call):
            q = qualified(ir, node.func)
            args_vary = any(self.varies(a) for a in node.args) or any(self.varies(k.value)
                                                                      for k in node.keywords)
            if isinstance(q, CudaRef):
                v = CUDA_CALLS.get(q.path)
                return args_vary if v is None else v
            if isinstance(q, DeviceFnRef):
                callee = ir.callees.get(id(node))
                return args_vary or (callee.returns_varying if callee else True)
            return args_vary
        raise ir.error(node, f"{type(node).__name__} expressions are not supported in a kernel")


def const_eval(ir: FunctionIR, node: ast.AST) -> Any:
    """Evaluate a compile-time constant expression (shapes, dtypes) or raise UnsupportedConstruct."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):  # a dtype given as a string, as numba-cuda allows
            try:
                return np.dtype(node.value)
            except TypeError:
                raise ir.error(node, f"{node.value!r} is not a NumPy dtype") from None
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(const_eval(ir, e) for e in node.elts)
    if isinstance(node, (ast.Name, ast.Attribute)):
        q = qualified(ir, node)
        if isinstance(q, DTypeRef):
            return q.dtype
        if isinstance(q, (bool, int, float, np.integer, np.floating, tuple)):
            return q
        if isinstance(q, tuple) and q and q[0] == "math" and q[1] in MATH_CONSTS:
            return MATH_CONSTS[q[1]]
        if isinstance(node, ast.Name) and node.id in ir.globals and isinstance(ir.globals[node.id], type):
            return _dtype_of(ir.globals[node.id])
    if isinstance(node, ast.BinOp):
        left, right = const_eval(ir, node.left), const_eval(ir, node.right)
        ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.Pow: lambda a, b: a ** b,
               ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
               ast.Div: lambda a, b: a / b}
        if type(node.op) in ops:
            return ops[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -const_eval(ir, node.operand)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "len"):
        return int(const_eval(ir, node.args[0]))
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return np.dtype(node.value)
    raise ir.error(node, f"{ast.unparse(node)} must be a compile-time constant "
                         "(a literal or a module-level constant)")

