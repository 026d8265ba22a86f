"""Front end: a kernel function -> ``FunctionIR`` (ir.py).

Reads the source with ``inspect`` + ``ast``, resolves every global name once (``names.py``: module
constants, closure cells, the ``numba.cuda`` namespace however it was imported, device functions, ``math``,
numba and NumPy types, NumPy arrays used as constants), rejects what is outside the subset with file:line,
and runs ``analysis.py`` to decide which values are *uniform* (the same in every lane of a chunk, kept as
plain scalars) and which are *varying* (one value per lane, kept as NumPy vectors). ``lanes.py`` turns the
IR into Python over lane vectors.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
from typing import Any

from ..faults import KernelCompileError, KernelSyntaxError, UnsupportedConstruct
from ..ir.function import FunctionIR, Source
from .analysis import Analysis
from .names import BUILTINS, CONSTRUCT_NAMES, classify_global


def read_source(func: Any) -> Source:
    filename = inspect.getsourcefile(func) or func.__code__.co_filename
    try:
        src_lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as e:
        raise KernelCompileError(
            f"cannot read the source of kernel {func.__name__!r}: {e}", filename=filename or "<unknown>"
        ) from None
    try:
        import linecache

        all_lines = linecache.getlines(filename) or src_lines
    except Exception:  # pragma: no cover - linecache is best effort
        all_lines = src_lines
    text = textwrap.dedent("".join(src_lines))
    try:
        mod = ast.parse(text)
    except SyntaxError as e:
        lineno = (e.lineno or 1) + first - 1
        raise KernelSyntaxError(f"syntax error: {e.msg}", filename=filename, lineno=lineno,
                                source_line=all_lines[lineno - 1] if lineno <= len(all_lines) else "") from None
    fn = next((n for n in mod.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None or isinstance(fn, ast.AsyncFunctionDef):
        raise UnsupportedConstruct(f"{func.__name__!r} is not a plain function", filename=filename, lineno=first)
    ast.increment_lineno(mod, first - 1)
    fn.decorator_list = []  # @cuda.jit(...), @gpusim.jit: how the function is launched, not kernel code
    return Source(fn, filename, first, list(all_lines))


def _func_globals(func: Any) -> dict[str, Any]:
    env = dict(func.__globals__)
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                env[name] = cell.cell_contents
            except ValueError:
                pass
    return env


def _assigned_names(tree: ast.FunctionDef) -> set[str]:
    names: set[str] = {a.arg for a in tree.args.args}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


ALLOWED_STMTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.For, ast.While, ast.Break, ast.Continue,
                 ast.Return, ast.Expr, ast.Pass)
ALLOWED_EXPRS = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call, ast.Name, ast.Constant,
                 ast.Attribute, ast.Subscript, ast.Tuple, ast.Slice)


class FrontEnd:
    """Builds and caches ``FunctionIR`` for kernels and their device functions."""

    def __init__(self) -> None:
        self._cache: dict[tuple[Any, tuple[bool, ...], bool], FunctionIR] = {}
        self._stack: list[Any] = []

    def build(self, func: Any, *, is_kernel: bool, param_varying: tuple[bool, ...] = ()) -> FunctionIR:
        func = getattr(func, "py_func", func)
        key = (func, param_varying, is_kernel)
        if key in self._cache:
            return self._cache[key]
        if func in self._stack:
            src = read_source(func)
            raise UnsupportedConstruct(
                f"device function {func.__name__!r} calls itself: recursion is not supported on the GPU",
                filename=src.filename, lineno=src.tree.lineno, source_line=src.line(src.tree.lineno))
        self._stack.append(func)
        try:
            ir = self._build(func, is_kernel, param_varying)
        finally:
            self._stack.pop()
        self._cache[key] = ir
        return ir

    def _build(self, func: Any, is_kernel: bool, param_varying: tuple[bool, ...]) -> FunctionIR:
        src = read_source(func)
        tree = src.tree
        strip_docstring(tree)
        unroll_constant_loops(tree, _func_globals(func))
        params = [a.arg for a in tree.args.args]
        ir = FunctionIR(func.__name__, func, tree, src, params, is_kernel, {}, param_varying)
        a = tree.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
            raise ir.error(tree, "kernel parameters must be plain names (no *args, **kwargs or defaults)")
        ir.locals = _assigned_names(tree)
        self._check_subset(ir)
        self._resolve_globals(ir)
        Analysis(self, ir).run()
        return ir

    # -- subset ------------------------------------------------------------------------------------
    def _check_subset(self, ir: FunctionIR) -> None:
        # the one place numba-cuda takes a string: the dtype of cuda.shared/local.array(shape, "float32")
        dtype_strings = {id(d) for n in ast.walk(ir.tree)
                         if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "array"
                         for d in n.args[1:2] + [k.value for k in n.keywords if k.arg == "dtype"]}
        for node in ast.walk(ir.tree):
            if node is ir.tree:
                continue
            if type(node) in CONSTRUCT_NAMES:
                raise ir.error(node, f"{CONSTRUCT_NAMES[type(node)]} cannot be used in a kernel")
            if isinstance(node, ast.stmt) and not isinstance(node, ALLOWED_STMTS):
                raise ir.error(node, f"the statement {type(node).__name__} is not supported in a kernel")
            if isinstance(node, ast.For):
                if not (isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name)
                        and node.iter.func.id == "range" and not node.iter.keywords
                        and 1 <= len(node.iter.args) <= 3):
                    raise ir.error(node, "only `for ... in range(...)` loops are supported in a kernel")
                if node.orelse:
                    raise ir.error(node, "for/else is not supported in a kernel")
                if not isinstance(node.target, ast.Name):
                    raise ir.error(node, "a range loop variable must be a plain name")
            if isinstance(node, ast.While) and node.orelse:
                raise ir.error(node, "while/else is not supported in a kernel")
            if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) \
                    and id(node) not in dtype_strings:
                raise ir.error(node, "strings cannot be used in a kernel")
            if isinstance(node, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn, ast.Is, ast.IsNot))
                                                     for o in node.ops):
                raise ir.error(node, "`in` and `is` comparisons are not supported in a kernel")
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                raise ir.error(node, "the @ operator is not supported in a kernel")

    def _resolve_globals(self, ir: FunctionIR) -> None:
        env = _func_globals(ir.func)
        for node in ast.walk(ir.tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in ir.locals:
                name = node.id
                if name in ir.globals:
                    continue
                if name in env:
                    try:
                        ir.globals[name] = classify_global(name, env[name])
                    except LookupError as e:
                        raise ir.error(node, f"the name {name!r} refers to a {e.args[0]}, "
                                             "which a kernel cannot use") from None
                elif name in BUILTINS:
                    ir.globals[name] = getattr(builtins, name)
                elif name in ("True", "False", "None"):
                    continue
                elif hasattr(builtins, name):
                    extra = " (write values to an output array instead)" if name == "print" else ""
                    raise ir.error(node, f"the builtin {name}() is not supported in a kernel{extra}")
                else:
                    raise ir.error(node, f"the name {name!r} is not defined", KernelCompileError)


def unroll_constant_loops(tree: ast.FunctionDef, env: dict[str, Any]) -> None:
    """``for d in (16, 8, 4)`` (a literal tuple or a module-level tuple of numbers) becomes a range loop over
    the positions, ``d`` taking ``(16, 8, 4)[k]``: numba-cuda iterates such tuples, and this keeps one loop
    form for the back ends."""
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.For) or not isinstance(node.target, ast.Name):
            continue
        it = node.iter
        values = None
        if isinstance(it, ast.Tuple) and it.elts and all(isinstance(e, ast.Constant) for e in it.elts):
            values = it
        elif isinstance(it, ast.Name) and isinstance(env.get(it.id), tuple) and env[it.id] and all(
                isinstance(v, (int, float)) for v in env[it.id]):
            values = ast.Tuple([ast.Constant(v) for v in env[it.id]], ast.Load())
        if values is None:
            continue
        count += 1
        pos = f"_gpusim_k{count}"
        loc = {"lineno": node.lineno, "col_offset": node.col_offset}
        node.iter = ast.Call(ast.Name("range", ast.Load(), **loc), [ast.Constant(len(values.elts), **loc)], [],
                             **loc)
        pick = ast.Assign([ast.Name(node.target.id, ast.Store(), **loc)],
                          ast.Subscript(values, ast.Name(pos, ast.Load(), **loc), ast.Load(), **loc), **loc)
        node.target = ast.Name(pos, ast.Store(), **loc)
        node.body.insert(0, pick)
        ast.fix_missing_locations(node)


def strip_docstring(tree: ast.FunctionDef) -> None:
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        tree.body = body[1:] or [ast.Pass(lineno=body[0].lineno, col_offset=0)]
