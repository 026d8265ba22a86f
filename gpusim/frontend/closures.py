"""Functions defined inside kernels and device functions (closures), as numba-cuda compiles them: a nested
``def`` becomes a device function of its own, which can be called where it is defined or passed to another
device function as a value (numba's make_function-to-JIT-function pass). Like numba, a closure captures only
compile-time values: a local assigned once from a number literal, another nested function, or what the
enclosing function itself sees as a constant (a global, a cell); anything else is an error at the capture.

The nested function is the Python function the enclosing function's code object holds (its own code object,
its defaults, cells holding the captured values), made once per compilation for each set of captured values,
so its source, line numbers and globals are the file's.
"""

from __future__ import annotations

import ast
import types
from typing import Any

from ..faults import KernelCompileError
from .names import DeviceFnRef


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


_NOT_LITERAL = object()


class ClosureLowering:
    def nested_def(self, s: ast.FunctionDef) -> list:
        """``def inner(...)`` in a kernel or device function: ``inner`` names the nested function from here on."""
        if s.decorator_list:
            raise self.error(s, "a nested function cannot have decorators in a kernel")
        code = next((c for c in self.func.__code__.co_consts if isinstance(c, types.CodeType)
                     and c.co_name == s.name and c.co_firstlineno == s.lineno), None)
        if code is None:  # pragma: no cover - the source and the code object disagree
            raise self.error(s, f"the nested function {s.name!r} has no code object gpusim can find")
        cells = []
        for name in code.co_freevars:
            cells.append(types.CellType(self.captured(name, s)))
        defaults = []
        for d in s.args.defaults:
            v = _literal(d)
            if v is _NOT_LITERAL:
                raise self.error(d, "a nested function's default values must be literals in a kernel",
                                 KernelCompileError)
            defaults.append(v)
        key = (code, tuple(_key(c.cell_contents) for c in cells), tuple(defaults))
        made = self.builder.__dict__.setdefault("nested_functions", {})
        fn = made.get(key)
        if fn is None:
            fn = types.FunctionType(code, self.func.__globals__, s.name, tuple(defaults) or None, tuple(cells) or None)
            fn.__qualname__ = f"{self.func.__qualname__}.<locals>.{s.name}"
            fn.__module__ = self.func.__module__
            made[key] = fn
        self.builder.global_cache(self.cache_key)[s.name] = DeviceFnRef(fn)
        return []

    def captured(self, name: str, s: ast.FunctionDef) -> Any:
        """The compile-time value a nested function captures for ``name``."""
        cache = self.builder.global_cache(self.cache_key)
        if name in cache and isinstance(cache[name], DeviceFnRef) and name not in self.locals:
            return cache[name].func                         # another nested function, defined before
        if name in self.locals:
            from .calls import _single_literal

            v = _single_literal(self.tree, name)
            if v is None:
                v = _single_float(self.tree, name)
            if v is None:
                raise self.error(s, f"the nested function {s.name!r} captures {name!r}, which is not a constant: "
                                    "numba-cuda captures only constant values in a closure (pass it as an argument)",
                                 KernelCompileError)
            return v
        if name in self.globals:
            return self.globals[name]
        raise self.error(s, f"the nested function {s.name!r} captures {name!r}, which is not defined",
                         KernelCompileError)


def _single_float(tree: ast.FunctionDef, name: str) -> Any:
    """A local assigned exactly once from a float or bool literal (else None)."""
    stores = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
    if len(stores) != 1:
        return None
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and n.targets[0] is stores[0] \
                and isinstance(n.value, ast.Constant) and isinstance(n.value.value, (float, bool)):
            return n.value.value
    return None


def _key(v: Any) -> Any:
    try:
        hash(v)
        return (type(v), v)
    except TypeError:
        return id(v)
