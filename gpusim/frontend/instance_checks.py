"""``isinstance(x, classes)`` in a kernel, decided at compile time on ``x``'s static type, as numba-cuda's
``isinstance`` overload decides it: the call becomes the constant True or False, and an ``if`` on it compiles
only the branch taken (``FunctionLowering.if_stmt``), so ``if isinstance(b, tuple): b = b[0]`` types.

numba's rule is type equality with the class's numba type: ``int`` is int64, ``float`` float64, ``complex``
complex128, ``bool`` boolean, ``np.int32`` / ``numba.int32`` int32 (an int32 value is not an ``int``);
``tuple`` is any tuple. Like numba, an Optional value and types outside its list are refused rather than
answered False.

Which branch numba-cuda (0.30.4) drops, and when, is its literal-propagation pass (``untyped_passes``:
``LiteralPropagationSubPipelinePass``), run on the SSA form once every other pruning is done:

1. a *partial* type inference of the whole function, both branches included; then the ``isinstance`` call,
   typed as a literal bool, becomes a constant and the branch it rules out is dropped before the real typing.
   Partial inference keeps going past a failure numba-cuda raises as its own ``TypingError`` (an attribute
   the type lacks: ``b.shape``, ``b.sum()``; a ``math`` function), but not past one raised as numba core's
   (no overload of an operator or builtin: ``b[0]`` on an int64, ``b + 1`` or ``-b`` on a tuple, ``len``,
   ``float(...)``, a device function that fails to type): that one is the compile's error. So
   ``if isinstance(b, tuple): b = b[0]`` does not compile for an int64 ``b``, and ``if isinstance(b, tuple):
   return b.shape`` does. gpusim lowers the branch ruled out, throws the result away, and refuses where the
   failure is of the second kind (``survives_partial_typing``).
2. ``isinstance(x, ...)`` where ``x`` may hold the value of more than one assignment here (a phi of the SSA
   form: assigned in a branch or a loop, not assigned again since) raises numba's NumbaTypeError
   ``isinstance() cannot determine the type of variable "x" due to a branch.``: ``FunctionLowering.merged``
   tracks those names.

Checked against numba-cuda's own compiler run on the CPU (its typing needs no GPU) and on an H200:
``docs/gpu-runs/2026-12-02-more-language-h200.json``.
"""

from __future__ import annotations

import ast

from ..faults import KernelCompileError, KernelTypeError
from ..ir import nodes as N
from ..ir.types import (
    BOOL,
    COMPLEX128,
    FLOAT64,
    INT64,
    NONE,
    Array,
    CharSeq,
    Optional,
    RecordRef,
    Scalar,
    Tuple,
    Type,
)
from .names import BuiltinRef, DTypeRef
from .tree_nodes import stored_names

#: the builtin classes ``isinstance`` compares with, as the IR type numba gives each (``tuple``: any tuple)
_BUILTIN_TYPES = {"int": INT64, "float": FLOAT64, "complex": COMPLEX128, "bool": BOOL}


class InstanceCheckLowering:
    def isinstance_call(self, node: ast.Call) -> N.Const:
        if len(node.args) != 2 or node.keywords:
            raise self.error(node, "isinstance() takes two arguments: a value and a class or a tuple of classes",
                             KernelCompileError)
        arg = node.args[0]
        if isinstance(arg, ast.Name) and arg.id in self.merged and self.func not in self.builder.plain_functions:
            raise self.error(node, f'isinstance() cannot determine the type of variable "{arg.id}" due to a branch '
                                   "(numba-cuda's rule: it is assigned on more than one path that reaches here)",
                             KernelTypeError)
        value = self.expr(arg)
        t = value.type
        if isinstance(t, Optional):
            raise self.error(node, f"isinstance cannot handle optional types (found {t}), as in numba-cuda",
                             KernelCompileError)
        if isinstance(t, RecordRef) or not isinstance(t, (Scalar, Tuple, Array, CharSeq, type(NONE))):
            raise self.error(node, f"isinstance() does not support values of type {t} (numba-cuda's rule)",
                             KernelCompileError)
        spec = node.args[1]
        classes = spec.elts if isinstance(spec, ast.Tuple) else [spec]
        answer = any(self.is_instance(t, c) for c in classes)
        return N.Const(answer, type=BOOL, line=node.lineno)

    def is_instance(self, t: Type, cls: ast.AST) -> bool:
        ref = self.resolve(cls)
        if isinstance(ref, BuiltinRef) and ref.name == "tuple":
            return isinstance(t, Tuple) and not isinstance(t, RecordRef)
        if isinstance(ref, BuiltinRef) and ref.name in _BUILTIN_TYPES:
            return t == _BUILTIN_TYPES[ref.name]
        if isinstance(ref, DTypeRef):
            return isinstance(t, Scalar) and t.dtype == ref.dtype
        raise self.error(cls, f"isinstance() in a kernel checks against int, float, complex, bool, tuple and "
                              f"NumPy or numba scalar types, not {ast.unparse(cls)}")

    # -- the branch isinstance rules out ----------------------------------------------------------------------
    def checks_instance(self, test: ast.AST) -> bool:
        """Does an ``if`` test call the builtin ``isinstance``, in a function numba-cuda types (not a plain Python
        helper the drop-in runs as numba's simulator does, untyped)?"""
        if self.func in self.builder.plain_functions:
            return False
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "isinstance"
                   and n.func.id not in self.locals for n in ast.walk(test))

    def instance_branch(self, s: ast.If, taken: bool) -> list[N.Stmt]:
        """An ``if`` decided by ``isinstance``: the branch ruled out is typed as numba's partial inference types
        it (and refused where numba cannot get past it), then only the branch taken is compiled. The names
        either branch assigns, where it runs on to the join, are phis there (numba's SSA comes first)."""
        skipped = s.orelse if taken else s.body
        env = self.type_ruled_out(skipped) if skipped else dict(self.env)
        out = self.block(s.body if taken else s.orelse)
        if env is not None and not self.live:  # the code after the if is dead only on the branch taken
            self.ruled_out_path = env
        for branch in (s.body, s.orelse):
            if branch and not isinstance(branch[-1], (ast.Return, ast.Raise, ast.Break, ast.Continue)):
                self.merged |= {n for st in branch for n in stored_names(st)}
        return out

    def type_ruled_out(self, stmts: list[ast.stmt], env: dict[str, Type] | None = None) -> dict[str, Type] | None:
        """Lower ``stmts`` (from the locals' types ``env``, else the current ones) and throw the result away,
        the function's state as it was; a failure numba-cuda's partial type inference does not get past is
        refused here. Returns the locals' types at the end, None where the statements never end there."""
        saved = (dict(self.env), self.live, dict(self.seen_types), dict(self.constants), self.at_top,
                 list(self.returns), set(self.merged), [(list(c.break_envs), list(c.continue_envs))
                                                        for c in self.loops])
        if env is not None:
            self.env, self.live = dict(env), True
        try:
            self.block(stmts)
            return dict(self.env) if self.live else None
        except KernelCompileError as e:
            if not survives_partial_typing(e):
                raise KernelTypeError(
                    f"{e.message}: numba-cuda types this branch although isinstance() rules it out, and cannot "
                    "type it (it drops the branch only after a partial typing of the whole function, which an "
                    "operator, subscript or builtin call that fits no type stops)",
                    filename=e.filename, lineno=e.lineno, source_line=e.source_line) from None
        finally:
            (self.env, self.live, self.seen_types, self.constants, self.at_top, self.returns, self.merged,
             jumps) = saved
            for ctx, (breaks, continues) in zip(self.loops, jumps):
                ctx.break_envs[:], ctx.continue_envs[:] = breaks, continues


def survives_partial_typing(e: KernelCompileError) -> bool:
    """Does numba-cuda's partial type inference get past this failure (its own ``TypingError``: an attribute
    the type lacks, a method of it, a ``math`` function), rather than stop on it (numba core's: no overload of
    an operator, a subscript or a builtin)?"""
    node = getattr(e, "node", None)
    return isinstance(node, ast.Attribute) or (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute))
