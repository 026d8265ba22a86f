"""The kernel IR: a checked ``ast.FunctionDef`` with its source, resolved names and analysis results.

Small and printable (``FunctionIR.dump()``): which locals vary per lane, which ``if``/loops diverge, which
exits are taken per lane, which calls go to which device functions. ``frontend.py`` builds it,
``analysis.py`` fills in the marks, the back ends (``lanes*.py``) read it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ..faults import KernelCompileError, UnsupportedConstruct


@dataclass
class Source:
    tree: ast.FunctionDef
    filename: str
    first_line: int  # line number in the file of the tree's line 1
    lines: list[str]  # the whole file's lines (for messages)

    def line(self, lineno: int) -> str:
        if 1 <= lineno <= len(self.lines):
            return self.lines[lineno - 1].rstrip("\n")
        return ""


@dataclass
class FunctionIR:
    """One kernel or device function, checked and annotated."""

    name: str
    func: Any
    tree: ast.FunctionDef
    source: Source
    params: list[str]
    is_kernel: bool
    globals: dict[str, Any]                 # resolved global names used by the function
    param_varying: tuple[bool | str, ...]   # for device functions: which parameters vary per lane (an
                                            # array parameter holds its kind instead, e.g. "shared")
    varying: set[str] = field(default_factory=set)      # local variables that vary per lane
    arrays: dict[str, str] = field(default_factory=dict)  # local name -> "global"|"shared"|"local"|"const"|"param"
    divergent: set[int] = field(default_factory=set)    # id() of If/For/While nodes that diverge
    masked_exits: set[int] = field(default_factory=set)  # id() of Return/Break/Continue taken per lane
    returns_varying: bool = False
    has_masked_return: bool = False
    callees: dict[int, FunctionIR] = field(default_factory=dict)  # id(Call node) -> device function IR
    locals: set[str] = field(default_factory=set)

    def error(self, node: ast.AST, message: str, cls: type = UnsupportedConstruct) -> KernelCompileError:
        lineno = getattr(node, "lineno", 0)
        return cls(message, filename=self.source.filename, lineno=lineno, source_line=self.source.line(lineno))

    def dump(self) -> str:
        """A readable form of the IR: the source with divergence marks."""
        out = [f"{'kernel' if self.is_kernel else 'device function'} {self.name}"
               f"  varying={sorted(self.varying)} arrays={self.arrays}"]
        for node in ast.walk(self.tree):
            if id(node) in self.divergent:
                out.append(f"  line {node.lineno}: divergent {type(node).__name__}")
            if id(node) in self.masked_exits:
                out.append(f"  line {node.lineno}: per-lane {type(node).__name__.lower()}")
        return "\n".join(out)
