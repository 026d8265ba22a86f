"""``raise`` in kernels and device functions, as numba-cuda compiles it: the exception and its arguments are
constants of the kernel (``raise ValueError``, ``raise MyError("text")``, with a global or captured string or
number as an argument), and a thread that reaches it stops the launch, which raises it on the host.

numba-cuda raises a kernel's exception on the host when the kernel is compiled with ``debug=True``; numba's
simulator raises it whatever ``debug`` says, and so does gpusim (a test backend should not let a ``raise`` pass).
"""

from __future__ import annotations

import ast
import builtins
from typing import Any

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import BOOL, INT64
from .names import attribute_chain


class KernelZeroDivision(ZeroDivisionError, FloatingPointError):
    """A division by zero in a kernel compiled with ``debug=True``: numba-cuda raises ``ZeroDivisionError`` (its
    Python error model), numba's simulator ``FloatingPointError`` (NumPy's, set to raise); this is both."""


class ExceptionLowering:
    """Mixed into ``FunctionLowering``."""

    def checked_division(self, op: str, divisor: N.Expr, value: N.Expr, line: int) -> N.Expr:
        """``value`` (a division by ``divisor``), raising ``KernelZeroDivision`` on the lanes whose divisor is 0
        when the kernel is compiled with debug=True (numba-cuda checks then, and only then)."""
        if not self.builder.debug or op not in ("truediv", "floordiv", "mod"):
            return value
        zero = N.Compare("eq", divisor, N.Const(0, type=divisor.type, line=line), type=BOOL, line=line)
        what = "division by zero" if op != "mod" else "modulo by zero"
        trap = N.Trap(what, raised=KernelZeroDivision(what), type=value.type, line=line)
        return N.Select(zero, trap, value, type=value.type, line=line)

    def raise_stmt(self, s: ast.Raise) -> list[N.Stmt]:
        if s.exc is None:
            raise self.error(s, "a bare `raise` (re-raising) needs an exception being handled: there is none in a "
                                "kernel")
        if s.cause is not None:
            raise self.error(s, "`raise ... from ...` is not supported in a kernel")
        exc = s.exc
        args: tuple = ()
        if isinstance(exc, ast.Call):
            if exc.keywords:
                raise self.error(s, "an exception raised in a kernel takes positional arguments only")
            args = tuple(self.exception_arg(a) for a in exc.args)
            exc = exc.func
        cls = self.exception_class(exc)
        try:
            raised = cls(*args) if args else cls
        except Exception as e:  # the exception's own __init__ refuses the arguments
            raise self.error(s, f"{cls.__name__}{args!r} cannot be made: {e}", KernelCompileError) from None
        self.live = False  # nothing after it runs (numba treats it as the end of the path)
        trap = N.Trap(f"the kernel raised {cls.__name__}", raised=raised, type=INT64, line=s.lineno)
        return [N.ExprStmt(trap, line=s.lineno)]

    def exception_class(self, node: ast.AST) -> type:
        value = self.compile_time_object(node)
        if not (isinstance(value, type) and issubclass(value, BaseException)):
            raise self.error(node, f"`raise {ast.unparse(node)}`: a kernel raises an exception class, or one made "
                                   "from constants")
        return value

    def exception_arg(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        base, _ = attribute_chain(node)
        value = None if isinstance(base, ast.Name) and base.id in self.locals else self.compile_time_object(node)
        if not isinstance(value, (str, int, float, bool)):
            raise self.error(node, f"an exception raised in a kernel takes constants as arguments (numba-cuda "
                                   f"needs them at compile time), not {ast.unparse(node)}")
        return value

    def compile_time_object(self, node: ast.AST) -> Any:
        """The Python object a global, captured or builtin name (or an attribute of a module) is."""
        node, parts = attribute_chain(node)
        if not isinstance(node, ast.Name) or node.id in self.locals:
            raise self.error(node, f"{ast.unparse(node)} is not known when the kernel is compiled")
        if node.id in self.globals:
            value = self.globals[node.id]
        elif hasattr(builtins, node.id):
            value = getattr(builtins, node.id)
        else:
            raise self.error(node, f"the name {node.id!r} is not defined", KernelCompileError)
        for p in parts:
            value = getattr(value, p, None)
        return value
