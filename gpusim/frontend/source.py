"""Reading a kernel's source: the function's syntax tree with file line numbers, its file's lines, and the
global and closure values its names refer to."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass
from typing import Any

from ..faults import KernelCompileError, KernelSyntaxError, UnsupportedConstruct


@dataclass
class Source:
    tree: ast.FunctionDef
    filename: str
    lines: list[str]  # the whole file's lines (for messages)

    def line(self, lineno: int) -> str:
        if 1 <= lineno <= len(self.lines):
            return self.lines[lineno - 1].rstrip("\n")
        return ""


def read_source(func: Any) -> Source:
    """Parse ``func``'s source; its decorators (``@cuda.jit(...)``) and docstring are not kernel code."""
    filename = inspect.getsourcefile(func) or func.__code__.co_filename
    try:
        src_lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as e:
        raise KernelCompileError(
            f"cannot read the source of kernel {func.__name__!r}: {e}", filename=filename or "<unknown>"
        ) from None
    all_lines = linecache.getlines(filename) or src_lines
    text = textwrap.dedent("".join(src_lines))
    try:
        mod = ast.parse(text)
    except SyntaxError as e:
        lineno = (e.lineno or 1) + first - 1
        raise KernelSyntaxError(f"syntax error: {e.msg}", filename=filename, lineno=lineno,
                                source_line=all_lines[lineno - 1] if lineno <= len(all_lines) else "") from None
    except (RecursionError, MemoryError):
        raise UnsupportedConstruct(f"the source of {func.__name__!r} is nested too deeply to compile",
                                   filename=filename, lineno=first) from None
    fn = next((n for n in mod.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None or isinstance(fn, ast.AsyncFunctionDef):
        raise UnsupportedConstruct(f"{func.__name__!r} is not a plain function", filename=filename, lineno=first)
    ast.increment_lineno(mod, first - 1)
    fn.decorator_list = []
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        fn.body = body[1:] or [ast.Pass(lineno=body[0].lineno, col_offset=0)]
    return Source(fn, filename, list(all_lines))


def func_globals(func: Any) -> dict[str, Any]:
    """The names ``func`` can see: its module's globals, overridden by its closure cells."""
    env = dict(func.__globals__)
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                env[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet
                pass
    return env
