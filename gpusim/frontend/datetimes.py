"""``datetime64`` and ``timedelta64`` in kernels, as numba types them (``numba.np.npdatetime``).

A value is an int64 count of its unit (NaT is the smallest int64), typed ``DateTime`` with its kind and unit,
so the back ends see int64 (arrays of them are passed as int64 views of the same memory, ``gpusim.launch``).
The operators numba-cuda gives them, for one unit:

* datetime - datetime -> timedelta; datetime +- timedelta -> datetime; timedelta +- timedelta -> timedelta;
* timedelta * integer, integer * timedelta, timedelta // integer -> timedelta; -timedelta;
* comparisons of two of one kind -> bool.

NaT in any operand makes the result NaT, and a comparison with NaT False (``!=``: True), as NumPy has it. Mixed
units are refused with a message (numba converts to the finer unit; no test of this suite needs it).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import BOOL, INT64, Scalar

NAT = int(np.iinfo(np.int64).min)


@dataclass(frozen=True)
class DateTime(Scalar):
    """A ``datetime64[unit]`` (``kind`` "M") or ``timedelta64[unit]`` (``kind`` "m") value, held as int64."""

    which: str = "M"
    unit: str = ""

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(f"{'datetime64' if self.which == 'M' else 'timedelta64'}"
                        f"{'[' + self.unit + ']' if self.unit else ''}")

    def __str__(self) -> str:
        return str(self.numpy_dtype)


def datetime_type(dtype: np.dtype) -> DateTime:
    unit = np.datetime_data(dtype)[0]
    return DateTime("int64", dtype.kind, "" if unit == "generic" else unit)


def as_int64(value: np.generic | np.ndarray):
    """A datetime64/timedelta64 scalar or array as the int64 it is stored as (an array: a view)."""
    if isinstance(value, np.ndarray):
        return value.view(np.int64)
    return np.int64(np.array(value).view(np.int64)[()])


class DateTimeLowering:
    """Mixed into ``FunctionLowering``."""

    def datetime_binary(self, op: str, left: N.Expr, right: N.Expr, node: ast.AST) -> N.Expr:
        a, b = left.type, right.type
        line = getattr(node, "lineno", left.line)
        da, db = isinstance(a, DateTime), isinstance(b, DateTime)
        if da and db and a.unit != b.unit and a.unit and b.unit:
            raise self.error(node, f"{a} {N.SYMBOLS[op]} {b}: gpusim computes with datetimes of one unit only "
                                   "(convert one with .astype on the host)")
        if op in N.COMPARE_OPS:
            if not (da and db and a.which == b.which):
                raise self.error(node, f"numba-cuda has no {N.SYMBOLS[op]} for {a} and {b}", KernelCompileError)
            return self.nat_compare(op, left, right, line)
        ret = self.datetime_result(op, a, b)
        if ret is None:
            raise self.error(node, f"numba-cuda has no {N.SYMBOLS[op]} for {a} and {b}", KernelCompileError)
        x, y = (self.as_count(left), self.as_count(right))
        if op == "floordiv":
            value = N.Binary("floordiv", x, y, type=INT64, line=line)
        else:
            value = N.Binary(op, x, y, type=INT64, line=line)
        nat = self.is_nat(left, line) if da else None
        if db:
            nb = self.is_nat(right, line)
            nat = nb if nat is None else N.Logical("or", nat, nb, type=BOOL, line=line)
        out = N.Select(nat, N.Const(NAT, type=INT64, line=line), value, type=INT64, line=line)
        return N.Cast(out, type=ret, line=line)

    @staticmethod
    def datetime_result(op: str, a: Scalar, b: Scalar) -> DateTime | None:
        da, db = isinstance(a, DateTime), isinstance(b, DateTime)
        unit = (a.unit if da else "") or (b.unit if db else "")
        if da and db:
            kinds = (a.which, b.which)
            if op == "sub" and kinds == ("M", "M"):
                return DateTime("int64", "m", unit)
            if op in ("add", "sub") and kinds == ("M", "m"):
                return DateTime("int64", "M", unit)
            if op == "add" and kinds == ("m", "M"):
                return DateTime("int64", "M", unit)
            if op in ("add", "sub") and kinds == ("m", "m"):
                return DateTime("int64", "m", unit)
            return None
        dt, other = (a, b) if da else (b, a)
        if dt.which == "m" and other.is_int and (op == "mul" or (op == "floordiv" and da)):
            return DateTime("int64", "m", unit)
        return None

    def as_count(self, e: N.Expr) -> N.Expr:
        """The int64 a datetime is held as (a number: itself, as int64)."""
        if isinstance(e.type, DateTime):
            return N.Cast(e, type=INT64, line=e.line)
        return self.cast(e, INT64)

    def is_nat(self, e: N.Expr, line: int) -> N.Expr:
        return N.Compare("eq", self.as_count(e), N.Const(NAT, type=INT64, line=line), type=BOOL, line=line)

    def nat_compare(self, op: str, left: N.Expr, right: N.Expr, line: int) -> N.Expr:
        x, y = self.as_count(left), self.as_count(right)
        test = N.Compare(op, x, y, type=BOOL, line=line)
        either = N.Logical("or", self.is_nat(left, line), self.is_nat(right, line), type=BOOL, line=line)
        if op == "ne":
            return N.Logical("or", test, either, type=BOOL, line=line)
        return N.Logical("and", test, N.Unary("not", either, type=BOOL, line=line), type=BOOL, line=line)
