"""Reading a kernel's source: the function's syntax tree with file line numbers, its file's lines, and the
global and closure values its names refer to.

A function built by ``exec`` of a string, or defined in a ``python -c`` command, has no file ``inspect`` can
read. For those, ``remember_exec_sources`` (the drop-in calls it) keeps the text of every string ``exec``
compiles, found through Python's ``compile`` and ``exec`` audit events and held as long as the functions made
from it live; and the ``-c`` command is read back from the process's command line. Either text is used only
for a function whose code object it compiles to.
"""

from __future__ import annotations
import __future__

import ast
import inspect
import linecache
import sys
import textwrap
import threading
import types
import weakref
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


#: code object of a function made by ``exec`` of a string -> that string (``remember_exec_sources``)
_EXEC_SOURCES: weakref.WeakKeyDictionary[types.CodeType, str] = weakref.WeakKeyDictionary()
_pending = threading.local()
_hooked = False
_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag


def remember_exec_sources() -> None:
    """From now on, keep the source of functions made by ``exec``/``compile`` of a string (once per process:
    an audit hook cannot be removed, and it only notes strings compiled as modules)."""
    global _hooked
    if not _hooked:
        _hooked = True
        sys.addaudithook(_audit)


def _audit(event: str, args: tuple) -> None:
    if event == "compile":
        source = args[0]
        _pending.source = (source, args[1]) if isinstance(source, (str, bytes)) else None
    elif event == "exec":
        pending = getattr(_pending, "source", None)
        _pending.source = None
        code = args[0] if args else None
        # the string compiled last in this thread, if it is this code's (exec of a string compiles it just
        # before); a code object compiled earlier and run later is checked again when its source is used
        if pending is not None and isinstance(code, types.CodeType) and code.co_filename == pending[1]:
            source = pending[0]
            text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
            for inner in _nested_codes(code):
                if inner is not code:
                    _EXEC_SOURCES[inner] = text


def _nested_codes(code: types.CodeType):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _nested_codes(c)


def _command_line_source() -> str | None:
    """The command of ``python -c COMMAND`` (Linux: from /proc), or None."""
    if not sys.argv or sys.argv[0] != "-c":
        return None
    try:
        with open("/proc/self/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    if b"-c" not in argv[1:]:
        return None
    k = argv.index(b"-c", 1)
    return argv[k + 1].decode("utf-8", "replace") if k + 1 < len(argv) else None


def _compiled_from(text: str, code: types.CodeType) -> bool:
    try:
        top = compile(text, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return any(c == code for c in _nested_codes(top))


def _string_source(func: Any) -> tuple[list[str], list[str], int] | None:
    """(all lines, the function's lines, its first line) of a function made from a string, or None."""
    code = getattr(func, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    text = _EXEC_SOURCES.get(code)
    if text is None and code.co_filename == "<string>":
        text = _command_line_source()
    if text is None or not _compiled_from(text, code):  # only a text that compiles to this very code
        return None
    lines = text.splitlines(keepends=True)
    first = code.co_firstlineno
    if not 1 <= first <= len(lines):
        return None
    return lines, inspect.getblock(lines[first - 1:]), first


def read_source(func: Any) -> Source:
    """Parse ``func``'s source; its decorators (``@cuda.jit(...)``) and docstring are not kernel code."""
    filename = inspect.getsourcefile(func) or func.__code__.co_filename
    try:
        src_lines, first = inspect.getsourcelines(func)
        all_lines = linecache.getlines(filename) or src_lines
    except (OSError, TypeError) as e:
        found = _string_source(func)
        if found is None:
            raise KernelCompileError(
                f"cannot read the source of kernel {func.__name__!r}: {e}", filename=filename or "<unknown>"
            ) from None
        all_lines, src_lines, first = found
        filename = func.__code__.co_filename
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
