"""Loading a player's solution file: read it, compile it, run it as a module, find its kernels by name.

Every way a file can be wrong becomes a ``KernelCompileError`` — a ``KernelSyntaxError`` for text that is not
Python, a ``SolutionError`` for a file that cannot be read, fails while it runs, or lacks a kernel — with the
file and line where that is known. Nothing a player writes can make this module raise anything else.

The file is compiled from the text read once, and that text is put into ``linecache`` under the file's path,
so ``inspect.getsource`` (which gpusim uses to read kernels) sees exactly what was compiled even if the player
saves the file again meanwhile. Each load runs as a fresh module with a unique name in ``sys.modules``.
"""

from __future__ import annotations

import contextlib
import itertools
import linecache
import signal
import sys
import threading
import time
import traceback
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpusim.faults import KernelCompileError, KernelSyntaxError

IMPORT_TIME_LIMIT_S = 30.0     # module-level code that runs longer than this is stopped (main thread only)
_counter = itertools.count(1)


class SolutionError(KernelCompileError):
    """A solution file cannot be used: unreadable, fails while its module-level code runs, or lacks a kernel.

    (A ``KernelCompileError`` so that callers handle every way a file is unusable in one ``except``.)
    """


@dataclass
class Solution:
    """A loaded solution file: its module and the kernels the puzzle asked for, by name."""

    path: Path
    module: types.ModuleType
    kernels: dict[str, Any]    # name -> numba dispatcher or plain function, as the file defines it


def load_solution(path: str | Path, kernel_names: tuple[str, ...] | list[str]) -> Solution:
    """Load ``path`` and find the kernels named in ``kernel_names``; raise ``KernelCompileError`` if not."""
    path = Path(path).expanduser().resolve()
    filename = str(path)
    source = _read(path)
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as e:
        lineno = e.lineno or 0
        line = e.text if e.text is not None else _line(source, lineno)
        raise KernelSyntaxError(f"your file is not valid Python: {e.msg}", filename=filename,
                                lineno=lineno, source_line=(line or "").rstrip("\n")) from None
    except ValueError as e:    # e.g. "source code string cannot contain null bytes"
        raise KernelSyntaxError(f"your file is not valid Python: {e}", filename=filename) from None

    module = _run_module(code, source, path)
    kernels = {}
    for name in kernel_names:
        kernel = getattr(module, name, None)
        if kernel is None:
            defined = sorted(n for n, v in vars(module).items() if _is_function(v) and not n.startswith("_"))
            found = ", ".join(defined) if defined else "no functions"
            raise SolutionError(f"your file has no kernel named `{name}` (it defines {found})",
                                filename=filename)
        if not _is_function(kernel):
            raise SolutionError(f"`{name}` in your file is a {type(kernel).__name__}, not a kernel function",
                                filename=filename)
        kernels[name] = kernel
    return Solution(path=path, module=module, kernels=kernels)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SolutionError("there is no such file", filename=str(path)) from None
    except UnicodeDecodeError as e:
        raise SolutionError(f"the file is not UTF-8 text ({e.reason} at byte {e.start})",
                            filename=str(path)) from None
    except OSError as e:
        raise SolutionError(f"the file cannot be read: {e.strerror or e}", filename=str(path)) from None


def _run_module(code: types.CodeType, source: str, path: Path) -> types.ModuleType:
    filename = str(path)
    name = f"_gpu_puzzles_solution_{next(_counter)}_{path.stem}"
    module = types.ModuleType(name)
    module.__file__ = filename
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    sys.modules[name] = module
    if "numba" in source:
        with contextlib.suppress(Exception):   # import numba before the time limit starts: it is slow
            import numba.cuda  # noqa: F401
    try:
        with _time_limit(IMPORT_TIME_LIMIT_S, filename):
            exec(code, module.__dict__)
    except (Exception, SystemExit) as e:
        sys.modules.pop(name, None)
        lineno = _last_line_in(e, filename)
        what = "took too long (an endless loop at module level?)" if isinstance(e, _ImportTimeout) else \
            f"raised {type(e).__name__}: {e}"
        raise SolutionError(f"running your file {what}", filename=filename, lineno=lineno,
                            source_line=_line(source, lineno)) from None
    return module


def _is_function(value: Any) -> bool:
    return callable(value) and (hasattr(value, "py_func") or isinstance(value, types.FunctionType))


def _line(source: str, lineno: int) -> str:
    lines = source.splitlines()
    return lines[lineno - 1] if 0 < lineno <= len(lines) else ""


def _last_line_in(error: BaseException, filename: str) -> int:
    """The line of the player's file where ``error`` happened (the innermost frame in that file), or 0."""
    lineno = 0
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename == filename:
            lineno = frame.lineno or 0
    if not lineno and isinstance(error, SyntaxError) and error.filename == filename:
        lineno = error.lineno or 0
    return lineno


class _ImportTimeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float, filename: str):
    """Stop the player's module-level code after ``seconds``.

    In the main thread on Unix a timer signal does it; elsewhere (a TUI worker thread) a trace function on
    the player's own frames checks the clock at each line. Neither can stop a single long call into C.
    """
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        with _alarm(seconds):
            yield
    else:
        with _line_clock(seconds, filename):
            yield


@contextlib.contextmanager
def _alarm(seconds: float):
    def on_alarm(signum, frame):
        raise _ImportTimeout()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)


@contextlib.contextmanager
def _line_clock(seconds: float, filename: str):
    deadline = time.monotonic() + seconds

    def on_line(frame, event, arg):
        if event == "line" and time.monotonic() > deadline:
            raise _ImportTimeout()
        return on_line

    def on_call(frame, event, arg):
        return on_line if frame.f_code.co_filename == filename else None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        yield
    finally:
        sys.settrace(previous)
