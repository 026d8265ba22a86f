"""When a kernel's arithmetic ran in float64 though none of its arrays is float64, and which lines did it.

numba types a Python number as int64 or float64, and float32 combined with either is float64: ``a[i] + 10``
or ``acc = 0.0; acc += a[i]`` computes in float64 on the GPU (and in gpusim, which follows numba's rules),
at 1/2 to 1/64 of the float32 rate.

* ``float64_work`` reads it from the FLOPs gpusim counted per dtype, for one launch.
* ``float64_lines`` finds the source lines, from gpusim's typed kernel IR (``gpusim.compile_kernel(...).module``:
  every expression has its numba type, and every implicit conversion is an explicit ``Cast``): an arithmetic
  operation of type float64 with an operand converted from float32 (or float16) is a promotion, and its other
  operands say why (a Python number, a float64 local and the line that made it one, an integer).
"""

from __future__ import annotations

import importlib
import io
import tokenize
from dataclasses import dataclass
from typing import Any

NARROW_FLOATS = ("float16", "float32")


@dataclass(frozen=True)
class Float64Work:
    flops: int            # float64 FLOPs of the launch
    total: int            # all its FLOPs


@dataclass(frozen=True)
class Promotion:
    """A line whose float32 arithmetic numba computes in float64, and why."""

    line: int
    source: str                   # the line's text, stripped
    function: str                 # the kernel or device function it is in
    causes: tuple[str, ...]       # e.g. "the number 10", "`acc`, float64 since line 6 (`acc = 0.0`)"


def float64_work(report: Any) -> Float64Work | None:
    """The launch's float64 FLOPs when it ran some but no global or shared array is float64; else None."""
    from gpusim.observe.flops import flop_total

    per_dtype = flop_total(getattr(report, "flops", None) or {})
    f64 = per_dtype.get("float64", 0)
    if not f64:
        return None
    arrays = [a for a in getattr(report, "arrays", []) or [] if a.space in ("global", "shared")]
    if any(str(a.dtype) == "float64" for a in arrays):
        return None
    return Float64Work(f64, sum(per_dtype.values()))


def float64_lines(kernel: Any, args: tuple) -> tuple[Promotion, ...] | None:
    """The lines of ``kernel`` (and the device functions it calls), launched with ``args``, where float32
    arithmetic is promoted to float64, in line order; None when this gpusim has no typed IR to read it from
    (or the kernel does not compile: the launch reports that)."""
    import gpusim

    try:   # the typed IR (gpusim's front end before it had one: no such modules)
        N = importlib.import_module("gpusim.ir.nodes")
        walk = importlib.import_module("gpusim.ir.walk")
    except ImportError:
        return None
    children, walk_exprs, walk_stmts = walk.children, walk.walk_exprs, walk.walk_stmts
    try:
        module = getattr(gpusim.compile_kernel(kernel, args=tuple(args)), "module", None)
    except Exception:
        return None
    if module is None or not hasattr(module, "functions"):
        return None
    found: dict[int, Promotion] = {}
    for function in module.functions.values():
        floats_from = _float_constants(function, N, walk_stmts)
        for stmt in walk_stmts(function.body):
            for top in children(stmt):
                for expr in walk_exprs(top):
                    if not isinstance(expr, (N.Binary, N.Fma, N.Intrinsic)) or str(expr.type) != "float64":
                        continue
                    operands = list(children(expr))
                    if not any(_widened_float(x, N) for x in operands):
                        continue
                    source = module.source_line(expr.line).strip()
                    causes = [c for x in operands if (c := _cause(x, N, source, floats_from, module)) is not None]
                    if not causes:
                        continue
                    old = found.get(expr.line)
                    merged = tuple(dict.fromkeys((old.causes if old else ()) + tuple(causes)))
                    found[expr.line] = Promotion(expr.line, source, function.py_name, merged)
    return tuple(found[line] for line in sorted(found))


def _widened_float(x: Any, N: Any) -> bool:
    return isinstance(x, N.Cast) and str(x.type) == "float64" and str(getattr(x.value, "type", "")) in NARROW_FLOATS


def _float_constants(function: Any, N: Any, walk_stmts: Any) -> dict[str, int]:
    """Locals first assigned a float64 constant (``acc = 0.0``) -> the line."""
    first: dict[str, int] = {}
    for stmt in walk_stmts(function.body):
        if isinstance(stmt, N.Assign) and stmt.target not in first:
            first[stmt.target] = stmt.line if isinstance(stmt.value, N.Const) and \
                str(stmt.value.type) == "float64" else 0
    return {name: line for name, line in first.items() if line}


def _cause(x: Any, N: Any, source: str, floats_from: dict[str, int], module: Any) -> str | None:
    """Why operand ``x`` of a float64 operation makes it float64 (None: it is not the reason)."""
    if isinstance(x, N.Const):
        return f"the number {_literal(source, x.value)}"
    if isinstance(x, N.Var) and str(x.type) == "float64" and not x.name.startswith("$"):
        line = floats_from.get(x.name)
        if line:
            return f"`{x.name}`, float64 since line {line} (`{module.source_line(line).strip()}`)"
        return f"`{x.name}`, a float64 value"
    if isinstance(x, N.Cast) and str(x.type) == "float64" and getattr(x.value.type, "is_int", False):
        inner = x.value
        if isinstance(inner, N.Const):
            return f"the number {_literal(source, inner.value)}"
        if isinstance(inner, N.Var) and not inner.name.startswith("$"):
            return f"`{inner.name}`, an {inner.type} (float32 with an {inner.type} is float64)"
        return f"an {inner.type} value (float32 with an {inner.type} is float64)"
    return None


def _literal(source: str, value: Any) -> str:
    """How the number was written on the line (``10`` rather than the IR's ``10.0``), where it can be found."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.NUMBER:
                try:
                    if float(token.string.replace("_", "")) == float(value):
                        return token.string
                except ValueError:
                    continue
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return repr(value)
