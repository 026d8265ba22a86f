"""Compile-time values: literal folding as CPython does it, typed literals, and the constants a kernel must
give (array shapes, dtypes).

numba reads bytecode, where CPython has already folded arithmetic on literals (``2**63``, ``10**30``,
``-1``, ``1 << 4``): ``fold_literals`` does the same on the syntax tree, with CPython's limits (nothing
folded that would raise, like ``1 // 0``, nor results past 128 bits), so a literal has the value and type
numba would see.
"""

from __future__ import annotations

import ast
import operator

import numpy as np

from ..ir.types import BOOL, COMPLEX128, FLOAT64, INT64, UINT64, Scalar

_MAX_INT_BITS = 128  # CPython's MAX_INT_SIZE for folding * ** <<
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitOr: operator.or_,
           ast.BitXor: operator.xor, ast.BitAnd: operator.and_}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert, ast.Not: operator.not_}


def _number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, bool)


def _safe(op: type, a, b) -> bool:
    """CPython's guards against folding huge results."""
    if not (isinstance(a, int) and isinstance(b, int)):
        return True
    if op is ast.Mult and a and b:
        return a.bit_length() + b.bit_length() <= _MAX_INT_BITS
    if op is ast.Pow and b > 0 and a:
        return a.bit_length() * b <= _MAX_INT_BITS
    if op is ast.LShift and b > 0:
        return a.bit_length() + b <= _MAX_INT_BITS
    return True


class _Folder(ast.NodeTransformer):
    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if _number(node.operand) and type(node.op) in _UNARY and not isinstance(node.op, ast.Not):
            try:
                value = _UNARY[type(node.op)](node.operand.value)
            except (TypeError, ValueError, OverflowError):
                return node
            return ast.copy_location(ast.Constant(value), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if _number(node.left) and _number(node.right) and type(node.op) in _BINOPS:
            a, b = node.left.value, node.right.value
            if not _safe(type(node.op), a, b):
                return node
            try:
                value = _BINOPS[type(node.op)](a, b)
            except (ArithmeticError, ValueError, TypeError):
                return node  # left for the kernel to fault on, as Python and numba leave it
            if type(value) not in (int, float, bool):
                return node
            return ast.copy_location(ast.Constant(value), node)
        return node


def fold_literals(tree: ast.AST) -> None:
    """Fold arithmetic on number literals in place, as CPython's compiler does."""
    _Folder().visit(tree)


def literal_type(value: bool | int | float | complex) -> Scalar | None:
    """numba's type of a Python literal, or None for an integer that fits no 64-bit type."""
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if isinstance(value, (int, np.integer)):
        v = int(value)
        if -(1 << 63) <= v < (1 << 63):
            return INT64
        if 0 <= v < (1 << 64):
            return UINT64
        return None
    if isinstance(value, complex):
        return COMPLEX128
    return FLOAT64


def dtype_from_string(text: str) -> np.dtype | None:
    """``cuda.shared.array(n, "float32")``: numba-cuda accepts a dtype's name."""
    try:
        return np.dtype(text)
    except TypeError:
        return None
