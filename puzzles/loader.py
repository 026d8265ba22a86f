"""Loading a player's solution: read the text, run it in the sandbox, rebuild its kernels in this process.

Every way a file can be wrong becomes a ``KernelCompileError`` — a ``KernelSyntaxError`` for text that is not
Python, a ``SolutionError`` for a file that cannot be read, fails (or exits, or is killed) while its module
code runs, lacks a kernel, or defines one a GPU could not run — with the file and line where that is known.
Nothing a player writes can make this module raise anything else, and nothing the file does while it runs
reaches this process: it runs in a child (``puzzles.judge.sandbox``), and the kernels are compiled again
here from the text (``puzzles.judge.rebuild``).

The text is read once and decoded as Python decodes a source file (UTF-8, with or without a BOM, or the
encoding its coding line declares). That text is put into ``linecache`` under the file's name, so gpusim
(which reads kernels with ``inspect``) sees exactly what was checked even if the player saves the file again
meanwhile.
"""

from __future__ import annotations

import ast
import io
import itertools
import linecache
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpusim.faults import KernelCompileError, KernelSyntaxError

from .judge import rebuild as _rebuild
from .judge import sandbox
from .judge.rebuild import Rebuilt, SolutionError

__all__ = ["IMPORT_TIME_LIMIT_S", "Solution", "SolutionError", "load_solution", "load_source", "read_source"]

IMPORT_TIME_LIMIT_S = 30.0     # module-level code that runs longer than this is stopped
_counter = itertools.count(1)


@dataclass
class Solution:
    """A loaded solution: the kernels the puzzle asked for (rebuilt plain functions), by name."""

    path: Path
    kernels: dict[str, Any]
    rebuilt: Rebuilt
    stdout: str = ""                                     # what the file printed while it loaded
    reference_use: list[str] = field(default_factory=list)   # how the file reached the reference solution

    @property
    def used_reference(self) -> bool:
        return bool(self.reference_use)


def load_solution(path: str | Path, kernel_names: tuple[str, ...] | list[str], *,
                  solutions_dir: str | Path = "") -> Solution:
    """Load the file at ``path`` and find the kernels named in ``kernel_names``."""
    path = Path(path).expanduser().resolve()
    return load_source(read_source(path), str(path), kernel_names, solutions_dir=solutions_dir)


def load_source(source: str, filename: str, kernel_names: tuple[str, ...] | list[str], *,
                solutions_dir: str | Path = "") -> Solution:
    """Load ``source`` (the text of a solution file named ``filename``) and find its kernels."""
    if source.startswith("\ufeff"):
        source = source[1:]
    tree = _parse(source, filename)
    folder = str(solutions_dir or _solutions_dir())
    reference_use = _reference_imports(tree)
    module_name = f"{_rebuild.OWN_MODULE_PREFIX}{next(_counter)}_{Path(filename).stem}"
    report = sandbox.run_module(source, filename, module_name, time_limit=IMPORT_TIME_LIMIT_S,
                                solutions_dir=folder)
    events = [e["what"] for e in report.events if e.get("event") == "reference" and isinstance(e.get("what"), str)]
    if any(w.startswith("import ") for w in events):     # an import opens the files itself: name the import
        events = [w for w in events if w.startswith("import ")]
    reference_use += [w for w in dict.fromkeys(events) if w not in reference_use]
    try:
        _raise_for_sandbox(report, source, filename)
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        rebuilt = _rebuild.rebuild(tree, report.values, report.arrays, tuple(kernel_names), filename,
                                   module_name, folder)
    except SolutionError as e:
        e.stdout, e.reference_use = report.stdout, reference_use
        raise
    reference_use += [r for r in rebuilt.reference_use if r not in reference_use]
    return Solution(path=Path(filename), kernels={n: f.func for n, f in rebuilt.kernels.items()},
                    rebuilt=rebuilt, stdout=report.stdout, reference_use=reference_use)


def read_source(path: Path) -> str:
    """The text of a source file, decoded as Python would; ``SolutionError`` if it cannot be read."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SolutionError("there is no such file", filename=str(path)) from None
    except OSError as e:
        raise SolutionError(f"the file cannot be read: {e.strerror or e}", filename=str(path)) from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)   # a BOM or a coding line
    except SyntaxError as e:
        encoding, problem = "utf-8", e
    else:
        problem = None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as e:
        name = "UTF-8" if encoding.startswith("utf-8") else encoding
        raise SolutionError(f"the file is not {name} text ({e.reason} at byte {e.start})",
                            filename=str(path)) from None
    except LookupError as e:
        problem = e
    if problem is not None:
        raise KernelSyntaxError(f"your file is not valid Python: {problem}", filename=str(path))
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _parse(source: str, filename: str) -> ast.Module:
    try:
        return ast.parse(source, filename)
    except SyntaxError as e:
        lineno = e.lineno or 0
        line = e.text if e.text is not None else _line(source, lineno)
        raise KernelSyntaxError(f"your file is not valid Python: {e.msg}", filename=filename,
                                lineno=lineno, source_line=(line or "").rstrip("\n")) from None
    except (ValueError, RecursionError, MemoryError) as e:   # null bytes; absurd nesting
        raise KernelSyntaxError(f"your file is not valid Python: {e or type(e).__name__}",
                                filename=filename) from None


def _raise_for_sandbox(report: sandbox.SandboxReport, source: str, filename: str) -> None:
    if report.protocol:
        raise SolutionError(f"running your file went wrong: it sent the checker malformed data "
                            f"({report.protocol})", filename=filename)
    if report.ended:
        raise SolutionError(f"running your file {report.ended}", filename=filename)
    error = report.error
    if error is not None:
        lineno = error.get("line") if isinstance(error.get("line"), int) else 0
        if error.get("timeout"):
            what = "took too long (an endless loop at module level?)"
        else:
            what = f"raised {str(error.get('type', 'an error'))[:80]}: {str(error.get('message', ''))[:2000]}"
        raise SolutionError(f"running your file {what}", filename=filename, lineno=lineno,
                            source_line=_line(source, lineno))
    if not report.done:
        raise SolutionError("running your file ended before it said what it defines", filename=filename)


def _reference_imports(tree: ast.Module) -> list[str]:
    """``import solutions...`` / ``from solutions... import`` anywhere in the file."""
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        for name in names:
            if (name == "solutions" or name.startswith("solutions.")) and f"import {name}" not in found:
                found.append(f"import {name}")
    return found


def _solutions_dir() -> Path:
    from . import workspace

    return workspace.SOLUTIONS_DIR


def _line(source: str, lineno: int) -> str:
    lines = source.splitlines()
    return lines[lineno - 1] if 0 < lineno <= len(lines) else ""


__all__ += ["KernelCompileError"]
