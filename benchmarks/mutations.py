"""The usual learner slips, as source rewrites of a solution file (for ``case_strength.py``).

``mutants_of(puzzle, source)`` parses the file, walks its kernels and device functions (the functions it
decorates with ``cuda.jit``) and its module-level integer constants, and yields one ``Mutant`` per slip:
the file's text with one expression (or one ``if``) replaced, so every other line keeps its number and its
comments. Kinds (``Mutant.op``):

* ``compare``   — a comparison's strictness swapped: ``<`` ↔ ``<=``, ``>`` ↔ ``>=``
* ``guard``     — an ``if`` without ``else`` dropped (its body always runs), or one operand of its ``and``
* ``range``     — a ``range`` stop ``- 1`` or ``+ 1``, a start ``+ 1``
* ``index``     — an array index that is a sum or difference (a tile edge: ``t + stride``, ``k0 + tx``) ``± 1``
* ``eps``       — ``sqrt(v + eps)`` → ``sqrt(v) + eps`` and → ``sqrt(v)``; ``sqrt(v) + eps`` (Adam's) →
                  ``sqrt(v + eps)`` and → ``sqrt(v)``
* ``max-shift`` — ``exp(a - b)`` → ``exp(a)``, one at a time and (where there are several) all at once
* ``precision`` — in a puzzle with a float16 input: ``numba.float32`` (a cast, an array's dtype) →
                  ``np.float16`` and a ``0.0`` accumulator → ``np.float16(0.0)`` (``import numpy as np`` appended
                  where the file lacks it); anywhere: ``float64`` → ``float32``
* ``ceil-div``  — ``(n + b - 1) // b`` → ``n // b`` (the last partial tile forgotten)
* ``constant``  — an integer constant ``± 1`` (in a kernel, or a module-level ``NAME = int``)

A module-level constant that nothing in the file reads is marked ``Mutant.unused`` (its mutants are
equivalent by construction: the launch comes from the puzzle's case, not from the file).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}


@dataclass(frozen=True)
class Mutant:
    slug: str
    op: str
    line: int
    col: int
    before: str         # the text replaced (first line of it, for an ``if``)
    after: str
    source: str         # the whole mutated file
    unused: str = ""    # a module constant's name, where nothing in the file reads it

    @property
    def key(self) -> str:
        """Stable while the reference is unchanged: names the verdict in ``case_strength_verdicts``."""
        return f"{self.slug}:{self.line}:{self.col}:{self.op}: {self.before} -> {self.after}"


def _is_kernel(fn: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in fn.decorator_list)


def _name(node: ast.AST) -> str:
    return ast.unparse(node)


def _is_call(node: ast.AST, *names: str) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) in names


def _eps_like(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return "eps" in node.id.lower()
    return isinstance(node, ast.Constant) and isinstance(node.value, float) and 0 < node.value <= 1e-3


def _plus(node: ast.expr, k: int) -> ast.expr:
    return ast.BinOp(node, ast.Add() if k > 0 else ast.Sub(), ast.Constant(abs(k)))


def _sqrt(arg: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(ast.Name("math"), "sqrt"), [arg], [])


def _under_root(node: ast.expr) -> ast.expr | None:
    """``v`` for ``sqrt(v)``, ``v / c`` for ``sqrt(v) / sqrt(c)``; else None."""
    if _is_call(node, "math.sqrt") and len(node.args) == 1:
        return node.args[0]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        a, b = _under_root(node.left), _under_root(node.right)
        if a is not None and b is not None:
            return ast.BinOp(a, ast.Div(), b)
    return None


def _has_half_input(puzzle) -> bool:
    try:
        cases = puzzle.make_cases(None)
    except Exception:
        return False
    return any(isinstance(v, np.ndarray) and v.dtype == np.float16 for c in cases for v in c.buffers.values())


class _Source:
    """The file's text, and replacing one node's span of it (positions are UTF-8 byte columns)."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.encode("utf-8").splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.raw = text.encode("utf-8")

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.starts[node.lineno - 1] + node.col_offset, self.starts[node.end_lineno - 1] + node.end_col_offset)

    def segment(self, node: ast.AST) -> str:
        a, b = self.span(node)
        return self.raw[a:b].decode("utf-8")

    def replace(self, node: ast.AST, text: str) -> str:
        a, b = self.span(node)
        return (self.raw[:a] + text.encode("utf-8") + self.raw[b:]).decode("utf-8")

    def unguard(self, node: ast.If) -> str:
        """The file with ``if ...:`` removed and its body dedented to the ``if``'s level."""
        first, last = node.lineno - 1, node.end_lineno
        body = self.lines[node.body[0].lineno - 1:last]
        shift = node.body[0].col_offset - node.col_offset
        dedented = [line[shift:] if line[:shift].strip() == b"" else line for line in body]
        return b"".join(self.lines[:first] + dedented + self.lines[last:]).decode("utf-8")


def mutants_of(puzzle, source: str) -> Iterator[Mutant]:
    """Every mutant of ``source`` (a reference of ``puzzle``), without duplicates or no-op rewrites."""
    src = _Source(source)
    tree = ast.parse(source)
    half = _has_half_input(puzzle)
    seen = {source}
    imports_np = any(isinstance(n, ast.Import) and any(a.name == "numpy" and a.asname == "np" for a in n.names)
                     for n in tree.body)

    def make(op: str, node: ast.AST, new: ast.AST | str, text: str | None = None) -> Mutant | None:
        after = new if isinstance(new, str) else ast.unparse(new)
        mutated = text if text is not None else src.replace(node, after)
        if "np." in after and not imports_np:
            mutated += "\nimport numpy as np  # added with the mutation\n"
        if mutated in seen:
            return None
        seen.add(mutated)
        before = src.segment(node).splitlines()[0].strip()
        return Mutant(puzzle.slug, op, node.lineno, node.col_offset, before, after, mutated)

    candidates: list[Mutant | None] = []
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for stmt in tree.body:      # module-level integer constants: TPB = 64
        if (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
                and type(stmt.value.value) is int):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            unused = names[0] if len(names) == 1 and names[0] not in read else ""
            for k in (-1, 1):
                m = make("constant", stmt.value, ast.Constant(stmt.value.value + k))
                candidates.append(m and replace(m, unused=unused))
    shifted = []
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and _is_kernel(fn):
            for node in ast.walk(fn):
                candidates.extend(_mutations(node, src, make, half))
                if _is_call(node, "math.exp") and isinstance(node.args[0], ast.BinOp) and isinstance(
                        node.args[0].op, ast.Sub):
                    shifted.append(node)
    if len(shifted) > 1:        # the shift dropped everywhere at once: exp(x) / sum(exp(x)) is softmax on paper
        text = source
        for node in sorted(shifted, key=lambda n: (n.lineno, n.col_offset), reverse=True):
            text = _Source(text).replace(node, ast.unparse(ast.Call(node.func, [node.args[0].left], [])))
        first = min(shifted, key=lambda n: (n.lineno, n.col_offset))
        candidates.append(make("max-shift", first, f"(all {len(shifted)} exp(a - b) -> exp(a))", text))
    yield from (m for m in candidates if m is not None)


def _mutations(node: ast.AST, src: _Source, make, half: bool) -> list:
    out = []
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in CMP_SWAP:
        out.append(make("compare", node, ast.Compare(node.left, [CMP_SWAP[type(node.ops[0])]()], node.comparators)))
    if isinstance(node, ast.If):
        if not node.orelse:
            out.append(make("guard", node, "(guard dropped)", src.unguard(node)))
        if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And):
            for i in range(len(node.test.values)):
                rest = node.test.values[:i] + node.test.values[i + 1:]
                new = rest[0] if len(rest) == 1 else ast.BoolOp(ast.And(), rest)
                out.append(make("guard", node.test, new))
    if _is_call(node, "range") and node.args:
        stop = node.args[0] if len(node.args) == 1 else node.args[1]
        for k in (-1, 1):
            out.append(make("range", stop, _plus(stop, k)))
        if len(node.args) >= 2:
            out.append(make("range", node.args[0], _plus(node.args[0], 1)))
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            if isinstance(part, ast.BinOp) and isinstance(part.op, (ast.Add, ast.Sub)):
                for k in (-1, 1):
                    out.append(make("index", part, _plus(part, k)))
    if _is_call(node, "math.sqrt") and len(node.args) == 1:
        arg = node.args[0]
        if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add):
            for inner, eps in ((arg.left, arg.right), (arg.right, arg.left)):
                if _eps_like(eps) and not _eps_like(inner):
                    root = ast.Call(node.func, [inner], [])
                    out.append(make("eps", node, ast.BinOp(root, ast.Add(), eps)))
                    out.append(make("eps", node, root))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        for root, eps in ((node.left, node.right), (node.right, node.left)):
            if not _eps_like(eps) or _eps_like(root):
                continue
            inner = _under_root(root)
            if inner is not None:       # sqrt(v) + eps -> sqrt(v + eps);  sqrt(v) / sqrt(c) + eps -> sqrt(v / c + eps)
                out.append(make("eps", node, _sqrt(ast.BinOp(inner, ast.Add(), eps))))
                out.append(make("eps", node, root))
    if _is_call(node, "math.exp") and len(node.args) == 1:
        arg = node.args[0]
        if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Sub):
            out.append(make("max-shift", node, ast.Call(node.func, [arg.left], [])))
    if isinstance(node, ast.Attribute) and node.attr in ("float32", "float64"):
        if node.attr == "float64":
            out.append(make("precision", node, ast.Attribute(node.value, "float32")))
        elif half:      # np.float16: gpusim (like the docs' kernel subset) casts with NumPy's half type
            out.append(make("precision", node, ast.Attribute(ast.Name("np"), "float16")))
    if (half and isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant)
            and type(node.value.value) is float):
        out.append(make("precision", node.value, f"np.float16({node.value.value!r})"))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        left = node.left
        if (isinstance(left, ast.BinOp) and isinstance(left.op, ast.Sub) and isinstance(left.left, ast.BinOp)
                and isinstance(left.left.op, ast.Add)):
            out.append(make("ceil-div", node, ast.BinOp(left.left.left, ast.FloorDiv(), node.right)))
    if isinstance(node, ast.Constant) and type(node.value) is int:
        for k in (-1, 1):
            if node.value + k >= 0:
                out.append(make("constant", node, ast.Constant(node.value + k)))
    return out
