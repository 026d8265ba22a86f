"""The fused multiply-add pass: ``a*b + c``, ``a*b - c``, ``c + a*b``, ``c - a*b`` on floats become ``Fma``.

The GPU compiler contracts these into one fused multiply-add with a single rounding, for float16, float32
and float64 (read on an H200: docs/gpu-semantics.md), so gpusim does it once here and every back end
computes the same bits. The rule, applied to each floating-point ``+``/``-``:

* if its left operand is a product (directly, or through a conversion), only that product is tried;
  otherwise, if its right operand is, that one is — so ``a*b + c*d`` fuses ``a*b``;
* a product is fused only where it has the sum's type: LLVM contracts an ``fmul`` and an ``fadd`` of one
  type, and the conversion between a float32 product and a float64 sum (``acc = 0.0; acc += a[i] * b[i]``)
  keeps them apart — the product is rounded to float32 first (an H200 gave different bits for puzzle 14
  when gpusim fused it). A product of integers (converted to the sum's float type) is never fused.

``acc += x*y`` is ``acc = acc + x*y`` and fuses the same way.
"""

from __future__ import annotations

from .nodes import Binary, Cast, Expr, Fma, Module, Unary
from .types import Scalar
from .walk import copy_tree, replace_children, walk_stmts


def _product(e: Expr) -> Binary | None:
    """``e`` as a product, looking through conversions (None if it is not one)."""
    while isinstance(e, Cast):
        e = e.value
    if isinstance(e, Binary) and e.op == "mul":
        return e
    return None


def _float(t) -> bool:
    return isinstance(t, Scalar) and t.is_float


def _negated(e: Expr) -> Expr:
    return Unary("neg", e, type=e.type, line=e.line)


def fuse(e: Expr) -> Expr:
    """``e`` with every contractible sum in it fused (bottom-up; ``e`` is modified in place)."""
    if isinstance(e, Binary) and e.op in ("add", "sub") and _float(e.type):
        t = e.type
        left, right = _product(e.left), None
        if left is None:
            right = _product(e.right)
        prod = left or right
        if prod is not None and prod.type == t:
            x, y = fuse(prod.left), fuse(prod.right)
            if left is not None:                 # x*y +/- c
                c = fuse(e.right)
                return Fma(x, y, c if e.op == "add" else _negated(c), type=t, line=e.line)
            c = fuse(e.left)                     # c +/- x*y
            return Fma(x if e.op == "add" else _negated(x), y, c, type=t, line=e.line)
    replace_children(e, fuse)
    return e


def contract(module: Module, *, in_place: bool = False) -> Module:
    """A copy of ``module`` with its multiply-adds fused (``in_place``: ``module`` itself, for a module no one
    else holds, as the front end's fresh one)."""
    m = module if in_place else copy_tree(module)
    for fn in m.functions.values():
        for s in walk_stmts(fn.body):
            replace_children(s, fuse)
    return m

